/** Builds the data service's Koa app from explicit dependencies (does not listen). */
import Router from "@koa/router";
import Koa from "koa";
import type { AdminDirectory } from "../../../shared/admin-access/caller.ts";
import { ApiError } from "../../../shared/errors.ts";
import { errorMiddleware } from "../../../shared/http/error-middleware.ts";
import { forwardedRequest, type TrustedProxies } from "../../../shared/http/forwarding.ts";
import type { Metrics } from "../../../shared/http/metrics.ts";
import { addOpsRoutes, type ReadinessCheck } from "../../../shared/http/ops-routes.ts";
import { requestContext } from "../../../shared/http/request-context.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import type { KeyValidator } from "../../../shared/keys/key-validation.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { RequestRateLimiter } from "../../../shared/rate-limits/request-limits.ts";
import { translateRedisError } from "../../../shared/redis-errors.ts";
import type { PlanExtension } from "./domain/write/writer.ts";
import type { AdminRouteDeps } from "./http/admin/deps.ts";
import { adminRouter } from "./http/admin-routes.ts";
import { internalRouter } from "./http/internal-routes.ts";
import { type LiveStreamDeps, LiveStreams } from "./http/live-stream.ts";
import { restRouter } from "./http/rest-routes.ts";
import type { ProviderRegistry } from "./providers/provider-registry.ts";
import type { ScriptRunner } from "./scripts/script-runner.ts";
import { translateMongoError } from "./store/mongo-errors.ts";
import type { WriteLoop, WriteQuota } from "./store/tenant-rows.ts";

/** Everything the app is built from: the admin routes' dependencies, and the rest. */
export interface DataDeps extends AdminRouteDeps {
  logger: Logger;
  metrics: Metrics;
  lifecycle: Lifecycle;
  readiness: Record<string, ReadinessCheck>;
  keys: KeyValidator;
  /** Request rate limits per account and per key (RATE_LIMITS); none when they are off. */
  rateLimits?: RequestRateLimiter;
  /** The `Authorization` scheme words the key validator accepts. */
  authSchemes: string[];
  /** The administrators as the admin gate sees them. */
  directory: AdminDirectory;
  /** Commits planned writes (locks, write intents, undo; see store/write-loop.ts). */
  writeLoop: WriteLoop;
  /** Live queries over the change feed (absent when the feed is switched off). */
  live?: Pick<LiveStreamDeps, "hub" | "feed" | "limits" | "onCut" | "accountLimit" | "opened">;
  providers: ProviderRegistry;
  planExtension?: PlanExtension;
  /** JavaScript resources and request/response events of API versions. */
  scripts: ScriptRunner;
  adminTokens: string[];
  serviceTokens: string[];
  trustedProxies: TrustedProxies;
  maxBodyBytes: number;
  now: () => number;
  /** What each account's writes are held to by its plan (none: no limits). */
  writeQuota?: (account: string) => Promise<WriteQuota>;
}

/** Counts key validations by outcome (valid, or the error code that refused the key). */
function countedKeys(keys: KeyValidator, metrics: Metrics): KeyValidator {
  const outcomes = metrics.counter("tessera_key_validations_total", "API key validations by outcome", [
    "outcome",
  ]);
  return {
    async validate(carrier, scope) {
      try {
        const record = await keys.validate(carrier, scope);
        outcomes.inc({ outcome: "valid" });
        return record;
      } catch (err) {
        outcomes.inc({ outcome: err instanceof ApiError ? String(err.errorCode) : "error" });
        throw err;
      }
    },
  };
}

export function buildDataApp(deps: DataDeps): Koa {
  const keys = countedKeys(deps.keys, deps.metrics);
  const app = new Koa();
  app.use(forwardedRequest(deps.trustedProxies));
  app.use(requestContext(deps.logger));
  app.use(deps.metrics.middleware);
  app.use(errorMiddleware([translateMongoError, translateRedisError]));

  const ops = new Router();
  addOpsRoutes(ops, deps.metrics, deps.readiness, () => deps.lifecycle.shuttingDown);
  const routers = [
    ops,
    restRouter({
      keys,
      projects: deps.projects,
      publicBaseUrl: deps.publicBaseUrl,
      tenants: deps.tenants,
      writeLoop: deps.writeLoop,
      logger: deps.logger,
      maxBodyBytes: deps.maxBodyBytes,
      planExtension: deps.planExtension,
      scripts: deps.scripts,
      authSchemes: deps.authSchemes,
      rateLimits: deps.rateLimits,
      audit: deps.auditTrail,
      writeQuota: deps.writeQuota,
      meterRequest: deps.meterRequest,
      live:
        deps.live &&
        new LiveStreams({
          ...deps.live,
          tenants: deps.tenants,
          keys,
          projects: deps.projects,
          logger: deps.logger,
          shuttingDown: () => deps.lifecycle.shuttingDown,
        }),
    }),
    adminRouter({
      ...deps,
      keys: deps.keyStore,
      schemes: deps.authSchemes,
    }),
    internalRouter(deps),
  ];
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  return app;
}
