/**
 * The admin API the data service serves (API keys: the auth service; an
 * administrator's @authentication: the auth service too): accounts and their
 * administrators, projects with their definition history, imports from Live API
 * Creator, built-in users,
 * webhook subscriptions, the audit trail, the definition schema. Every route is
 * behind the admin gate (shared/admin-access): the
 * operator's ADMIN_TOKEN, or an account administrator's key within its account.
 */
import Router from "@koa/router";
import type { AdminCallerDeps } from "../../../../shared/admin-access/caller.ts";
import { adminGate } from "../../../../shared/admin-access/gate.ts";
import { targetOf } from "../../../../shared/admin-access/permissions.ts";
import { ApiError } from "../../../../shared/errors.ts";
import { addAccountAdminRoutes } from "./admin/account-admin-routes.ts";
import { addAccountRoutes } from "./admin/account-routes.ts";
import { addAuditRoutes } from "./admin/audit-routes.ts";
import { addDefinitionSchemaRoutes } from "./admin/definition-schema-routes.ts";
import type { AdminRouteDeps } from "./admin/deps.ts";
import { addLacImportRoutes } from "./admin/lac-import-routes.ts";
import { addNameCheckRoutes } from "./admin/name-check-routes.ts";
import { addProjectRoutes } from "./admin/project-routes.ts";
import { addUsageRoutes } from "./admin/usage-routes.ts";
import { addUserRoutes } from "./admin/user-routes.ts";
import { addWebhookRoutes } from "./admin/webhook-routes.ts";

export type AdminDeps = AdminRouteDeps & AdminCallerDeps;

export function adminRouter(deps: AdminDeps): Router {
  const router = new Router({ prefix: "/admin/v1" });
  router.use(adminGate({ ...deps, audit: deps.auditTrail }));
  // A call the gate let into an account counts in that account's usage (kind `admin`).
  const meter = deps.meterRequest;
  if (meter)
    router.use(async (ctx, next) => {
      const account = targetOf(ctx.path).account;
      try {
        await next();
        if (account !== undefined) meter(account, undefined, "admin", ctx.status);
      } catch (err) {
        if (account !== undefined)
          meter(account, undefined, "admin", err instanceof ApiError ? err.statusCode : 500);
        throw err;
      }
    });
  addAccountRoutes(router, deps);
  addAccountAdminRoutes(router, deps);
  addProjectRoutes(router, deps);
  addUserRoutes(router, deps);
  addLacImportRoutes(router, deps);
  addWebhookRoutes(router, deps);
  addUsageRoutes(router, deps);
  addAuditRoutes(router, deps);
  addNameCheckRoutes(router, deps);
  addDefinitionSchemaRoutes(router);
  return router;
}
