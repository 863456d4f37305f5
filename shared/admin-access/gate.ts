/**
 * The admin API's gate, the same in both services: who is calling
 * (caller.ts), whether they may address the account at all and what their role
 * allows (permissions.ts), and the audit report of every change (audit.ts).
 * Requests refused before the caller is known, or for another account, are not
 * audited; a reader's refused change is. A write with a query parameter it
 * does not take is refused before its handler runs (write-params.ts).
 */
import type { Context, Middleware, Next } from "koa";
import type { RequestState } from "../http/request-context.ts";
import { type AuditSink, audited } from "./audit.ts";
import { type AdminCaller, type AdminCallerDeps, resolveAdminCaller } from "./caller.ts";
import { checkRole, checkScope, targetOf } from "./permissions.ts";
import { checkWriteParams } from "./write-params.ts";

export interface AdminGateDeps extends AdminCallerDeps {
  audit: AuditSink;
}

interface GateState extends RequestState {
  caller?: AdminCaller;
}

export function adminGate(deps: AdminGateDeps): Middleware {
  return async (ctx: Context, next: Next) => {
    const state = ctx.state as GateState;
    const caller = await resolveAdminCaller(deps, ctx.get("authorization") || undefined, state.requestId);
    const target = targetOf(ctx.path);
    checkScope(caller, target);
    state.caller = caller;
    await audited(ctx, deps.audit, caller, target.account, async () => {
      checkRole(caller, ctx.method, target);
      checkWriteParams(ctx.method, ctx.path, ctx.querystring);
      await next();
    });
  };
}

/** The caller the gate let through. */
export function callerOf(ctx: Context): AdminCaller {
  const caller = (ctx.state as GateState).caller;
  if (!caller) throw new Error("admin route without the admin gate");
  return caller;
}
