/**
 * An account's administrators: the operator and the account's admins manage
 * them, its readers list them. Passwords are never answered. An administrator
 * may not remove or demote the account's last admin (the operator may).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { z } from "zod";
import { noteAudit } from "../../../../../shared/admin-access/audit.ts";
import { callerOf } from "../../../../../shared/admin-access/gate.ts";
import { errors } from "../../../../../shared/errors.ts";
import { checkIfMatch, etag, parseIfMatch, stateTag } from "../../../../../shared/http/if-match.ts";
import { readJsonBody } from "../../../../../shared/http/json-body.ts";
import { parseBody } from "../../../../../shared/http/parse-body.ts";
import { ADMIN_ROLES, type AdminRole } from "../../../../../shared/keys/key-record.ts";
import { lastAdminProblem, newCredentialStamp } from "../../domain/admin/account-admins.ts";
import { requireAccountIncarnation } from "../../domain/admin/project-changes.ts";
import type { StoredAdmin } from "../../store/admin-store.ts";
import { type AdminRouteDeps, isoTime, requireAccountUid } from "./deps.ts";
import { loginParam, nameParam } from "./params.ts";

const adminBody = z.strictObject({
  /** Required to create an administrator; without it an update keeps the password. */
  password: z.string().min(1).max(1024).optional(),
  role: z.enum(ADMIN_ROLES),
});

const adminView = (a: StoredAdmin) => ({
  login: a.login,
  role: a.role,
  created: isoTime(a.createdAt),
  updated: isoTime(a.updatedAt),
});

/** The administrator's entity tag: the account's incarnation and the administrator's state. */
const adminTag = (a: StoredAdmin) =>
  stateTag(a.accountUid, [a.login, a.role, a.credentialStamp, new Date(a.updatedAt).getTime()]);

function noAdmin(login: string) {
  return errors.notFound(`No admin '${login}' in this account`);
}

export function addAccountAdminRoutes(router: Router, deps: AdminRouteDeps): void {
  const accountUid = (ctx: Context) => requireAccountUid(deps, nameParam(ctx, "account"), ctx);
  /**
   * Runs a change of the account's administrators holding the lease that the
   * account's deletion takes too, once the account is still incarnation `uid`.
   */
  const holdAdmins = <T>(account: string, uid: string, work: () => Promise<T>) =>
    deps.leases.hold(`admins:${uid}`, async () => {
      await requireAccountIncarnation(deps.meta, account, uid);
      return work();
    });
  /** The account's admins may not leave it without one. */
  const keepAnAdmin = async (ctx: Context, uid: string, login: string, role: AdminRole | null) => {
    if (callerOf(ctx).kind === "operator") return;
    const problem = lastAdminProblem(await deps.admins.list(uid), login, role);
    if (problem) throw errors.forbidden(problem);
  };

  router.get("/accounts/:account/admins", async (ctx) => {
    ctx.body = (await deps.admins.list(await accountUid(ctx))).map(adminView);
  });

  router.get("/accounts/:account/admins/:login", async (ctx) => {
    const uid = await accountUid(ctx);
    const login = loginParam(ctx, "login");
    const admin = await deps.admins.get(uid, login);
    if (!admin) throw noAdmin(login);
    ctx.set("ETag", etag(adminTag(admin)));
    ctx.body = adminView(admin);
  });

  router.put("/accounts/:account/admins/:login", async (ctx) => {
    const account = nameParam(ctx, "account");
    const login = loginParam(ctx, "login");
    const precondition = parseIfMatch(ctx.get("if-match"));
    const body = parseBody(adminBody, await readJsonBody(ctx, deps.maxBodyBytes));
    const uid = await accountUid(ctx);
    noteAudit(ctx, {
      summary: `admin '${login}' as ${body.role}${body.password === undefined ? "" : ", password set"}`,
    });
    let newPassword: { passwordHash: string; credentialStamp: string } | undefined;
    if (body.password !== undefined) {
      const policy = deps.hasher.policyProblem(body.password);
      if (policy) throw errors.malformed(`Password rejected: ${policy}`);
      newPassword = {
        passwordHash: await deps.hasher.hash(body.password),
        credentialStamp: newCredentialStamp(),
      };
    }
    const { created, admin } = await holdAdmins(account, uid, async () => {
      const existing = await deps.admins.get(uid, login);
      checkIfMatch(precondition, existing ? adminTag(existing) : undefined, `Admin '${login}'`);
      const credentials = newPassword ?? existing;
      if (!credentials) throw errors.malformed("'password' is required to create an admin");
      await keepAnAdmin(ctx, uid, login, body.role);
      const created = await deps.admins.put({
        account,
        accountUid: uid,
        login,
        role: body.role,
        passwordHash: credentials.passwordHash,
        credentialStamp: credentials.credentialStamp,
      });
      const parts = [
        existing && existing.role !== body.role
          ? `role ${existing.role} → ${body.role}`
          : `role ${body.role}`,
        ...(newPassword ? ["password set"] : []),
      ];
      noteAudit(ctx, { summary: `admin '${login}' ${created ? "created" : "updated"}: ${parts.join(", ")}` });
      return { created, admin: await deps.admins.get(uid, login) };
    });
    if (!admin) throw noAdmin(login);
    ctx.status = created ? 201 : 200;
    ctx.set("ETag", etag(adminTag(admin)));
    ctx.body = adminView(admin);
  });

  router.delete("/accounts/:account/admins/:login", async (ctx) => {
    const login = loginParam(ctx, "login");
    const precondition = parseIfMatch(ctx.get("if-match"));
    const uid = await accountUid(ctx);
    noteAudit(ctx, { summary: `admin '${login}' deleted` });
    await holdAdmins(nameParam(ctx, "account"), uid, async () => {
      const existing = await deps.admins.get(uid, login);
      if (!existing) throw noAdmin(login);
      checkIfMatch(precondition, adminTag(existing), `Admin '${login}'`);
      await keepAnAdmin(ctx, uid, login, null);
      await deps.admins.delete(uid, login);
    });
    ctx.body = { login, deleted: true };
  });
}
