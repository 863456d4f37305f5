/**
 * Admin API for a project's keys: create manual keys, list every key of the
 * project, delete one. Behind the admin gate (shared/admin-access), like the
 * data service's admin routes: the operator, or the account's administrators
 * (readers list only); every change goes into the account's audit trail.
 * Keys belong to the project's incarnation: those of an earlier project of the
 * same name (minted while it was being deleted) are neither listed nor
 * deletable here, and no project honours them. A created key's `ETag` names the
 * project's incarnation and the key's state; its DELETE honours `If-Match`.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import type { AuditSink } from "../../../../shared/admin-access/audit.ts";
import { noteAudit } from "../../../../shared/admin-access/audit.ts";
import type { AdminCallerDeps } from "../../../../shared/admin-access/caller.ts";
import { adminGate, callerOf } from "../../../../shared/admin-access/gate.ts";
import { errors } from "../../../../shared/errors.ts";
import { checkIfMatch, etag, parseIfMatch, stateTag } from "../../../../shared/http/if-match.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import { hidePath, type RequestState } from "../../../../shared/http/request-context.ts";
import type { KeyRecord } from "../../../../shared/keys/key-record.ts";
import { createManualKey, keyView, type ManualKeyDeps } from "../../../../shared/keys/manual-keys.ts";
import { isNameOf, isValidName } from "../../../../shared/names.ts";
import type { DataServiceClient } from "../clients/data-service-client.ts";

export interface ApikeyRouteDeps extends ManualKeyDeps, Omit<AdminCallerDeps, "keys"> {
  data: DataServiceClient;
  audit: AuditSink;
  maxBodyBytes: number;
}

/**
 * The account and project, both existing (an absent account answers as such, whatever is asked), with the
 * project's settings. An administrator of an earlier incarnation of the account finds no account.
 */
async function scope(ctx: Context, deps: ApikeyRouteDeps) {
  const { account, project } = ctx.params as Record<string, string>;
  if (!isValidName(account) || !isValidName(project))
    throw errors.malformed("Invalid account or project name");
  const requestId = (ctx.state as RequestState).requestId;
  const info = await deps.data.account(account, requestId);
  const caller = callerOf(ctx);
  if (!info || (caller.kind === "admin" && caller.accountUid !== info.uid)) throw errors.noAccount(account);
  const settings = await deps.data.settings(account, project, requestId);
  if (!settings) throw errors.notFound(`No project '${project}' in account '${account}'`);
  return { account, project, settings };
}

/** A key's entity tag: its project's incarnation, its id and its status. */
const keyTag = (record: Pick<KeyRecord, "projectUid" | "id" | "status">) =>
  stateTag(record.projectUid, [record.id, record.status]);

export function apikeyRouter(deps: ApikeyRouteDeps): Router {
  const router = new Router({ prefix: "/admin/v1/accounts/:account/projects/:project/apikeys" });
  router.use(adminGate(deps));
  router.post("/", async (ctx) => {
    const { account, project, settings } = await scope(ctx, deps);
    const body = await readJsonBody(ctx, deps.maxBodyBytes);
    const key = await createManualKey(deps, account, project, settings, body);
    // The project deleted (or deleted and created again) meanwhile: the key goes with its incarnation.
    const now = await deps.data.settings(account, project, (ctx.state as RequestState).requestId);
    if (now?.uid !== settings.uid) {
      await deps.keys.deleteById(account, project, key.id, settings.uid);
      throw errors.notFound(`No project '${project}' in account '${account}'`);
    }
    noteAudit(ctx, {
      summary: `key '${key.name}' created (id ${key.id}, roles [${key.roles.join(", ")}], ${key.expiration ? `expires ${key.expiration}` : "no expiry"})`,
    });
    ctx.status = 201;
    ctx.set("ETag", etag(keyTag({ projectUid: settings.uid, id: key.id, status: "active" })));
    ctx.body = key;
  });
  router.get("/", async (ctx) => {
    const { account, project, settings } = await scope(ctx, deps);
    const now = deps.now();
    const keys = await deps.keys.list(account, project, now);
    ctx.body = keys.filter((r) => r.projectUid === settings.uid).map((r) => keyView(r, now));
  });
  router.delete("/:id", async (ctx) => {
    const precondition = parseIfMatch(ctx.get("if-match"));
    // What names no key may be a key's value sent by mistake: logs and the audit never show it.
    const named = ctx.path;
    hidePath(ctx, `${named.slice(0, named.lastIndexOf("/") + 1)}(not a key id)`);
    const { account, project, settings } = await scope(ctx, deps);
    const id = ctx.params.id ?? "";
    if (!isNameOf("keyId", id)) throw errors.malformed("Not a key id: key ids are listed by GET …/apikeys");
    const record = await deps.keys.getById(account, project, id);
    if (record?.projectUid !== settings.uid) throw errors.notFound("No such API key in this project");
    hidePath(ctx, named);
    checkIfMatch(precondition, keyTag(record), `Key ${id}`);
    if (!(await deps.keys.deleteById(account, project, id, settings.uid)))
      throw errors.notFound("No such API key in this project");
    noteAudit(ctx, { summary: `key ${id} deleted` });
    ctx.body = { id, deleted: true };
  });
  return router;
}
