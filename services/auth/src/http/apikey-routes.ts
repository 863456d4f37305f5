/**
 * Admin API for a project's keys: create manual keys, list every key of the
 * project, delete one. Behind the admin gate (shared/admin-access), like the
 * data service's admin routes: the operator, or the account's administrators
 * (readers list only); every change goes into the account's audit trail.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import type { AuditSink } from "../../../../shared/admin-access/audit.ts";
import { noteAudit } from "../../../../shared/admin-access/audit.ts";
import type { AdminCallerDeps } from "../../../../shared/admin-access/caller.ts";
import { adminGate } from "../../../../shared/admin-access/gate.ts";
import { errors } from "../../../../shared/errors.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import { hidePath, type RequestState } from "../../../../shared/http/request-context.ts";
import { isValidName } from "../../../../shared/names.ts";
import type { DataServiceClient } from "../clients/data-service-client.ts";
import { createManualKey, keyView, type ManualKeyDeps } from "../domain/manual-keys.ts";

export interface ApikeyRouteDeps extends ManualKeyDeps, Omit<AdminCallerDeps, "keys"> {
  data: DataServiceClient;
  audit: AuditSink;
  maxBodyBytes: number;
}

/** The account and project, both existing (an absent account answers as such, whatever is asked), with the project's settings. */
async function scope(ctx: Context, deps: ApikeyRouteDeps) {
  const { account, project } = ctx.params as Record<string, string>;
  if (!isValidName(account ?? "") || !isValidName(project ?? ""))
    throw errors.malformed("Invalid account or project name");
  const requestId = (ctx.state as RequestState).requestId;
  if (!(await deps.data.account(account!, requestId))) throw errors.noAccount(account!);
  const settings = await deps.data.settings(account!, project!, requestId);
  if (!settings) throw errors.notFound(`No project '${project}' in account '${account}'`);
  return { account: account!, project: project!, settings };
}

export function apikeyRouter(deps: ApikeyRouteDeps): Router {
  const router = new Router({ prefix: "/admin/v1/accounts/:account/projects/:project/apikeys" });
  router.use(adminGate(deps));
  router.post("/", async (ctx) => {
    const { account, project, settings } = await scope(ctx, deps);
    const body = await readJsonBody(ctx, deps.maxBodyBytes);
    const key = await createManualKey(deps, account, project, settings, body);
    noteAudit(ctx, {
      summary: `key '${key.name}' created (id ${key.id}, roles [${key.roles.join(", ")}], ${key.expiration ? `expires ${key.expiration}` : "no expiry"})`,
    });
    ctx.status = 201;
    ctx.body = key;
  });
  router.get("/", async (ctx) => {
    const { account, project } = await scope(ctx, deps);
    const now = deps.now();
    ctx.body = (await deps.keys.list(account, project)).map((r) => keyView(r, now));
  });
  router.delete("/:id", async (ctx) => {
    // What names no key may be a key's value sent by mistake: logs and the audit never show it.
    const named = ctx.path;
    hidePath(ctx, `${named.slice(0, named.lastIndexOf("/") + 1)}(not a key id)`);
    const { account, project } = await scope(ctx, deps);
    const id = ctx.params.id ?? "";
    if (!(await deps.keys.deleteById(account, project, id)))
      throw errors.notFound("No such API key in this project");
    hidePath(ctx, named);
    noteAudit(ctx, { summary: `key ${id} deleted` });
    ctx.body = { id, deleted: true };
  });
  return router;
}
