/** Builds the data service's Koa app from explicit dependencies (does not listen). */
import Router from "@koa/router";
import Koa from "koa";
import { ApiError } from "../../../shared/errors.ts";
import { errorMiddleware } from "../../../shared/http/error-middleware.ts";
import type { Metrics } from "../../../shared/http/metrics.ts";
import { addOpsRoutes, type ReadinessCheck } from "../../../shared/http/ops-routes.ts";
import { requestContext } from "../../../shared/http/request-context.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import type { KeyValidator } from "../../../shared/keys/key-validation.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { PasswordHasher } from "./auth/passwords.ts";
import type { ProviderRegistry } from "./auth/provider-registry.ts";
import type { FilterChecker, ProjectModel } from "./domain/project-model.ts";
import type { PlanExtension } from "./domain/writer.ts";
import { adminRouter } from "./http/admin-routes.ts";
import { internalRouter } from "./http/internal-routes.ts";
import { restRouter } from "./http/rest-routes.ts";
import type { MetaStore } from "./store/meta-store.ts";
import type { ProjectCache } from "./store/project-cache.ts";
import type { TenantStore } from "./store/tenant-store.ts";

export interface DataDeps {
  logger: Logger;
  metrics: Metrics;
  lifecycle: Lifecycle;
  readiness: Record<string, ReadinessCheck>;
  keys: KeyValidator;
  meta: MetaStore;
  tenants: TenantStore;
  projects: ProjectCache;
  providers: ProviderRegistry;
  hasher: PasswordHasher;
  checkFilter: FilterChecker;
  checkModel?: (model: ProjectModel) => { path: string; message: string }[];
  planExtension?: PlanExtension;
  adminTokens: string[];
  serviceTokens: string[];
  publicBaseUrl: string | undefined;
  maxBodyBytes: number;
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
  app.proxy = true;
  app.use(requestContext(deps.logger));
  app.use(deps.metrics.middleware);
  app.use(errorMiddleware());

  const ops = new Router();
  addOpsRoutes(ops, deps.metrics, deps.readiness, () => deps.lifecycle.shuttingDown);
  const routers = [
    ops,
    restRouter({
      keys,
      projects: deps.projects,
      publicBaseUrl: deps.publicBaseUrl,
      tenants: deps.tenants,
      logger: deps.logger,
      maxBodyBytes: deps.maxBodyBytes,
      planExtension: deps.planExtension,
    }),
    adminRouter({
      adminTokens: deps.adminTokens,
      meta: deps.meta,
      tenants: deps.tenants,
      projects: deps.projects,
      hasher: deps.hasher,
      checkFilter: deps.checkFilter,
      checkModel: deps.checkModel,
      maxBodyBytes: deps.maxBodyBytes,
    }),
    internalRouter({
      serviceTokens: deps.serviceTokens,
      projects: deps.projects,
      providers: deps.providers,
      maxBodyBytes: deps.maxBodyBytes,
    }),
  ];
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  return app;
}
