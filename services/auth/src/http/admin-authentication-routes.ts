/**
 * POST /admin/v1/accounts/{account}/@authentication (an administrator's login,
 * revalidation, disable, password change) and GET (the login form's fields).
 * Needs no key. An account that does not exist answers as one that does.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import type { LoginInfoResponse } from "../../../../shared/contracts/internal-api.ts";
import { errors } from "../../../../shared/errors.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import type { RequestState } from "../../../../shared/http/request-context.ts";
import { isValidName } from "../../../../shared/names.ts";
import { type AdminAuthenticationDeps, handleAdminAuthentication } from "../domain/admin-authentication.ts";
import { wantsPasswordChange } from "./authentication-routes.ts";

export interface AdminAuthenticationRouteDeps extends AdminAuthenticationDeps {
  maxBodyBytes: number;
}

const ADMIN_LOGIN_FORM: LoginInfoResponse = {
  fields: [
    { name: "username", display: "Admin name", type: "text" },
    { name: "password", display: "Password", type: "password" },
  ],
  links: [],
};

function accountOf(ctx: Context): string {
  const account = ctx.params.account ?? "";
  if (!isValidName(account)) throw errors.noAccount(account);
  return account;
}

export function adminAuthenticationRouter(deps: AdminAuthenticationRouteDeps): Router {
  const router = new Router({ prefix: "/admin/v1/accounts/:account" });
  const post = async (ctx: Context) => {
    const account = accountOf(ctx);
    const body = await readJsonBody(ctx, deps.maxBodyBytes);
    ctx.body = await handleAdminAuthentication(deps, {
      account,
      body,
      enablePasswordChange: wantsPasswordChange(ctx.querystring),
      clientAddress: ctx.ip, // set from trusted proxies only (shared/http/forwarding.ts)
      requestId: (ctx.state as RequestState).requestId,
      path: ctx.path,
    });
  };
  const get = (ctx: Context) => {
    accountOf(ctx);
    ctx.body = ADMIN_LOGIN_FORM;
  };
  for (const path of ["/@authentication", "/@authentication/"]) {
    router.post(path, post);
    router.get(path, get);
  }
  return router;
}
