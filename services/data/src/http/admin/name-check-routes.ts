/**
 * GET /admin/v1/name-check: the operator's list of stored names that break the name
 * grammar (a path outside every account: the operator's alone; docs/admin-api.md).
 */
import type Router from "@koa/router";
import { storedNamesOutsideGrammar } from "../../domain/admin/name-check.ts";
import type { AdminRouteDeps } from "./deps.ts";

export function addNameCheckRoutes(router: Router, deps: AdminRouteDeps): void {
  router.get("/name-check", async (ctx) => {
    const findings = await storedNamesOutsideGrammar(deps);
    ctx.body = { count: findings.length, findings };
  });
}
