/** Builds the auth service's Koa app from explicit dependencies (does not listen). */
import Router from "@koa/router";
import Koa from "koa";
import { errorMiddleware } from "../../../shared/http/error-middleware.ts";
import type { Metrics } from "../../../shared/http/metrics.ts";
import { addOpsRoutes, type ReadinessCheck } from "../../../shared/http/ops-routes.ts";
import { requestContext } from "../../../shared/http/request-context.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import type { KeyStore } from "../../../shared/keys/key-store.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { DataServiceClient } from "./clients/data-service-client.ts";
import { apikeyRouter } from "./http/apikey-routes.ts";
import { authenticationRouter } from "./http/authentication-routes.ts";
import type { LoginThrottle } from "./store/login-throttle.ts";

export interface AuthDeps {
  logger: Logger;
  metrics: Metrics;
  lifecycle: Lifecycle;
  readiness: Record<string, ReadinessCheck>;
  keys: KeyStore;
  data: DataServiceClient;
  throttle: LoginThrottle;
  adminTokens: string[];
  maxBodyBytes: number;
  now: () => number;
}

export function buildAuthApp(deps: AuthDeps): Koa {
  const app = new Koa();
  app.proxy = true;
  app.use(requestContext(deps.logger));
  app.use(deps.metrics.middleware);
  app.use(errorMiddleware());
  const logins = deps.metrics.counter("tessera_logins_total", "Login attempts by outcome", ["outcome"]);
  const ops = new Router();
  addOpsRoutes(ops, deps.metrics, deps.readiness, () => deps.lifecycle.shuttingDown);
  const routers = [
    ops,
    authenticationRouter({ ...deps, onLogin: (outcome) => logins.inc({ outcome }) }),
    apikeyRouter(deps),
  ];
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  return app;
}
