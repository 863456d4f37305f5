/** POST …/@authentication (login, revalidate, disable, password change) and GET (login form fields). */
import Router from "@koa/router";
import type { Context } from "koa";
import { errors } from "../../../../shared/errors.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import type { RequestState } from "../../../../shared/http/request-context.ts";
import { isValidName } from "../../../../shared/names.ts";
import { admitRequest, type RequestRateLimiter } from "../../../../shared/rate-limits/request-limits.ts";
import type { DataServiceClient } from "../clients/data-service-client.ts";
import { type AuthenticationDeps, handleAuthentication } from "../domain/authentication.ts";

export interface AuthenticationRouteDeps extends AuthenticationDeps {
  data: DataServiceClient;
  maxBodyBytes: number;
  /** Request rate limits (RATE_LIMITS): a POST to @authentication counts toward its account's. */
  rateLimits?: RequestRateLimiter;
}

/** `?enablePasswordChange!` exactly, case-sensitive (a bare parameter or with any value). */
export function wantsPasswordChange(querystring: string): boolean {
  return querystring.split("&").some((part) => part.split("=")[0] === "enablePasswordChange!");
}

/**
 * The official Node SDK (`caliveapicreator` 1.3.x) posts its login body with no
 * Content-Type header at all. Such a body is read as JSON here, and only here,
 * and only when the request carries no `Origin` either: browsers send `Origin`
 * on every cross-origin POST, so a web page still cannot drive logins with an
 * untyped body. A declared non-JSON type is still 415 (docs/compatibility.md).
 */
function treatUntypedLoginAsJson(ctx: Context): void {
  if (ctx.get("content-type") === "" && ctx.get("origin") === "") {
    ctx.req.headers["content-type"] = "application/json";
  }
}

function scope(ctx: Context) {
  const { account, project, version } = ctx.params as Record<string, string>;
  return { account: validName(account), project: validName(project), version: validName(version) };
}

function validName(name: string | undefined): string {
  if (!isValidName(name)) throw errors.notFound(`No such account, project or version: '${name}'`);
  return name;
}

export function authenticationRouter(deps: AuthenticationRouteDeps): Router {
  const router = new Router({ prefix: "/rest/:account/:project/:version" });
  const post = async (ctx: Context) => {
    const s = scope(ctx);
    if (deps.rateLimits) ctx.set(await admitRequest(deps.rateLimits, s.account));
    treatUntypedLoginAsJson(ctx);
    const body = await readJsonBody(ctx, deps.maxBodyBytes);
    ctx.body = await handleAuthentication(deps, {
      ...s,
      body,
      enablePasswordChange: wantsPasswordChange(ctx.querystring),
      clientAddress: ctx.ip, // set from trusted proxies only (shared/http/forwarding.ts)
      requestId: (ctx.state as RequestState).requestId,
    });
  };
  const get = async (ctx: Context) => {
    const s = scope(ctx);
    const info = await deps.data.loginInfo(s.account, s.project, (ctx.state as RequestState).requestId);
    if (!info) throw errors.notFound(`No project '${s.project}' in account '${s.account}'`);
    ctx.body = info;
  };
  for (const path of ["/@authentication", "/@authentication/"]) {
    router.post(path, post);
    router.get(path, get);
  }
  return router;
}
