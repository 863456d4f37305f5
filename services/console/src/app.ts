/** Builds the console server's Koa app from explicit dependencies (does not listen). */
import Router from "@koa/router";
import Koa, { type Context } from "koa";
import { errors } from "../../../shared/errors.ts";
import { errorMiddleware } from "../../../shared/http/error-middleware.ts";
import type { Metrics } from "../../../shared/http/metrics.ts";
import { addOpsRoutes } from "../../../shared/http/ops-routes.ts";
import { requestContext } from "../../../shared/http/request-context.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import type { Logger } from "../../../shared/logger.ts";
import { securityHeaders } from "./security-headers.ts";
import { PRECOMPRESSED, type StaticFile } from "./static-files.ts";

/** Where the console lives on the base URL (shared/routes.json routes it here). */
export const CONSOLE_MOUNT = "/console/";

export interface ConsoleDeps {
  logger: Logger;
  metrics: Metrics;
  lifecycle: Lifecycle;
  files: Map<string, StaticFile>;
}

/**
 * The file in the first encoding the build wrote (brotli before gzip) that the request
 * accepts at least as well as none (Koa's own Accept-Encoding negotiation, q-values
 * included; koa-send's rule), else as it is.
 */
function sendFile(ctx: Context, file: StaticFile): void {
  const offered = PRECOMPRESSED.map((p) => p.encoding).filter((e) => file.encoded[e]);
  const chosen = offered.find((e) => ctx.acceptsEncodings(e, "identity") === e);
  const variant = chosen ? file.encoded[chosen] : undefined;
  const etag = variant?.etag ?? file.etag;
  if (offered.length > 0) ctx.vary("Accept-Encoding");
  ctx.set("ETag", etag);
  ctx.set("Cache-Control", file.immutable ? "public, max-age=31536000, immutable" : "no-cache");
  ctx.type = file.contentType;
  if (ctx.get("if-none-match") === etag) {
    ctx.status = 304;
    return;
  }
  if (chosen) ctx.set("Content-Encoding", chosen);
  ctx.body = variant?.body ?? file.body;
}

export function buildConsoleApp(deps: ConsoleDeps): Koa {
  const app = new Koa();
  app.use(requestContext(deps.logger));
  app.use(deps.metrics.middleware);
  app.use(securityHeaders());
  app.use(errorMiddleware());

  const router = new Router();
  addOpsRoutes(router, deps.metrics, {}, () => deps.lifecycle.shuttingDown);
  router.all(/^\/console(\/.*)?$/, (ctx) => {
    if (ctx.method !== "GET" && ctx.method !== "HEAD") throw errors.methodNotAllowed(ctx.method);
    if (ctx.path === CONSOLE_MOUNT.slice(0, -1)) {
      ctx.status = 301;
      ctx.redirect(CONSOLE_MOUNT);
      return;
    }
    const file = deps.files.get(ctx.path);
    if (!file) throw errors.notFound(`No resource at ${ctx.path}`);
    sendFile(ctx, file);
  });
  app.use(router.routes()).use(router.allowedMethods());
  return app;
}
