/**
 * The internal API's part for account administration (the auth service's side
 * of the admin API): an account's incarnation, an administrator as stored now
 * (for the admin gate), the verdict on an administrator's login, and the audit
 * reports of the changes the auth service makes. Contract:
 * shared/contracts/internal-api.ts.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { AuditSink } from "../../../../shared/admin-access/audit.ts";
import type { AdminDirectory } from "../../../../shared/admin-access/caller.ts";
import {
  type AccountInfo,
  adminLoginBodySchema,
  auditReportBodySchema,
} from "../../../../shared/contracts/internal-api.ts";
import { errors } from "../../../../shared/errors.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import { isValidName } from "../../../../shared/names.ts";
import { type AdminLoginDeps, authenticateAdmin } from "../domain/admin/account-admins.ts";
import { requireAccount } from "./admin/deps.ts";

export interface InternalAdminDeps extends AdminLoginDeps {
  directory: AdminDirectory;
  auditTrail: AuditSink;
  maxBodyBytes: number;
}

function accountName(ctx: Context): string {
  const account = ctx.params.account ?? "";
  if (!isValidName(account)) throw errors.noAccount(account);
  return account;
}

export function addInternalAdminRoutes(router: Router, deps: InternalAdminDeps): void {
  router.get("/accounts/:account", async (ctx) => {
    const account = accountName(ctx);
    const doc = await requireAccount(deps, account);
    ctx.body = { name: account, uid: deps.meta.accountUid(doc) } satisfies AccountInfo;
  });

  router.get("/accounts/:account/admins/:login", async (ctx) => {
    const admin = await deps.directory.find(accountName(ctx), ctx.params.login ?? "", "");
    if (!admin) throw errors.notFound("No such admin");
    ctx.body = { login: ctx.params.login, ...admin };
  });

  router.post("/accounts/:account/admin-login", async (ctx) => {
    const parsed = adminLoginBodySchema.safeParse(await readJsonBody(ctx, deps.maxBodyBytes));
    if (!parsed.success) throw errors.malformed("Invalid admin login request");
    ctx.body = await authenticateAdmin(deps, accountName(ctx), parsed.data);
  });

  router.post("/accounts/:account/audit", async (ctx) => {
    const parsed = auditReportBodySchema.safeParse(await readJsonBody(ctx, deps.maxBodyBytes));
    if (!parsed.success) throw errors.malformed("Invalid audit report");
    await deps.auditTrail.append({ ...parsed.data, account: accountName(ctx) });
    ctx.status = 204;
  });
}
