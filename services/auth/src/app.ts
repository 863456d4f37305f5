/** Builds the auth service's Koa app from explicit dependencies (does not listen). */
import Router from "@koa/router";
import Koa from "koa";
import type { AuditSink } from "../../../shared/admin-access/audit.ts";
import type { AdminDirectory } from "../../../shared/admin-access/caller.ts";
import { errorMiddleware } from "../../../shared/http/error-middleware.ts";
import { forwardedRequest, type TrustedProxies } from "../../../shared/http/forwarding.ts";
import type { Metrics } from "../../../shared/http/metrics.ts";
import { addOpsRoutes, type ReadinessCheck } from "../../../shared/http/ops-routes.ts";
import { requestContext } from "../../../shared/http/request-context.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import type { KeyStore } from "../../../shared/keys/key-store.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { KeyLimitOf } from "../../../shared/quotas/key-limit.ts";
import type { RequestRateLimiter } from "../../../shared/rate-limits/request-limits.ts";
import { translateRedisError } from "../../../shared/redis-errors.ts";
import type { DataServiceClient } from "./clients/data-service-client.ts";
import type { ProjectIdentityFields } from "./domain/identity-fields-cache.ts";
import { adminAuthenticationRouter } from "./http/admin-authentication-routes.ts";
import { apikeyRouter } from "./http/apikey-routes.ts";
import { authenticationRouter } from "./http/authentication-routes.ts";
import type { AttemptThrottle } from "./store/attempt-throttle.ts";

export interface AuthDeps {
  logger: Logger;
  metrics: Metrics;
  lifecycle: Lifecycle;
  readiness: Record<string, ReadinessCheck>;
  keys: KeyStore;
  /** The plan's apiKeysPerProject, for keys minted by logins and made by the key routes. */
  keyLimit?: KeyLimitOf;
  data: DataServiceClient;
  throttle: AttemptThrottle;
  /** Request rate limits per account (RATE_LIMITS): logins count toward their account's. */
  rateLimits?: RequestRateLimiter;
  /** Account administrators' logins: their own throttle. */
  adminThrottle: AttemptThrottle;
  identityFields: ProjectIdentityFields;
  /** The administrators, as the data service has them (for the admin gate). */
  directory: AdminDirectory;
  /** The account audit trail (kept by the data service). */
  audit: AuditSink;
  adminTokens: string[];
  /** AUTH_SCHEMES: the scheme words of `Authorization: <scheme> <key>:1`. */
  schemes: string[];
  adminKeyLifetimeSeconds: number;
  trustedProxies: TrustedProxies;
  maxBodyBytes: number;
  now: () => number;
}

export function buildAuthApp(deps: AuthDeps): Koa {
  const app = new Koa();
  app.use(forwardedRequest(deps.trustedProxies));
  app.use(requestContext(deps.logger));
  app.use(deps.metrics.middleware);
  app.use(errorMiddleware([translateRedisError]));
  const logins = deps.metrics.counter("tessera_logins_total", "Login attempts by outcome", ["outcome"]);
  const ops = new Router();
  addOpsRoutes(ops, deps.metrics, deps.readiness, () => deps.lifecycle.shuttingDown);
  const adminLogins = deps.metrics.counter(
    "tessera_admin_logins_total",
    "Account administrators' login attempts by outcome",
    ["outcome"],
  );
  const routers = [
    ops,
    authenticationRouter({ ...deps, onLogin: (outcome) => logins.inc({ outcome }) }),
    adminAuthenticationRouter({ ...deps, onLogin: (outcome) => adminLogins.inc({ outcome }) }),
    apikeyRouter(deps),
  ];
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  return app;
}
