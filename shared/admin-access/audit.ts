/**
 * The audit trail of admin changes: every request that could change something
 * (any method but GET/HEAD/OPTIONS) of a caller allowed to address the account
 * is reported once it is answered — who, what (method, path and the handler's
 * short summary), the outcome status and the request id the service stamped
 * (and the client's X-Request-Id apart from it). Summaries are written
 * by the handlers and never hold a password or a key value. A report that cannot
 * be stored is logged and does not change the answer (the change was made).
 * The data API reports the writes an account administrator makes with their own
 * admin key the same way (`auditedWhenAdmin`: the caller is known from the key).
 */
import type { Context } from "koa";
import { ApiError } from "../errors.ts";
import { type RequestState, shownPath } from "../http/request-context.ts";
import type { AdminRole } from "../keys/key-record.ts";
import { loggableError } from "../loggable-error.ts";
import type { Logger } from "../logger.ts";
import type { AdminCaller } from "./caller.ts";

export type AuditActor = { kind: "operator" } | { kind: "admin"; login: string; role: AdminRole };

export function actorOf(caller: AdminCaller): AuditActor {
  return caller.kind === "operator"
    ? { kind: "operator" }
    : { kind: "admin", login: caller.login, role: caller.role };
}

/** One admin change, as a service reports it. */
export interface AuditReport {
  /** The account the path names; undefined for platform-wide routes. */
  account: string | undefined;
  /** The account's incarnation, when the handler knows it (creation, deletion); else the current one. */
  accountUid?: string;
  actor: AuditActor;
  method: string;
  path: string;
  summary: string;
  status: number;
  /** The error's code when the change was refused. */
  errorCode?: number;
  /** The id the service stamped on the request (never the client's). */
  requestId: string;
  /** The X-Request-Id the request came with, if any (chosen by whoever sent it). */
  clientRequestId?: string;
}

export interface AuditSink {
  append(report: AuditReport): Promise<void>;
}

/** What a handler tells the audit about its request. */
export interface AuditNote {
  /** What the change was, in a few words (never a password or a key value). */
  summary?: string;
  accountUid?: string;
  /** Not a change after all (a dry run). */
  skip?: boolean;
}

interface AuditState extends RequestState {
  audit?: AuditNote;
  /** Who is calling, once known (see auditAs). */
  auditCaller?: { caller: AdminCaller; account: string | undefined };
}

/** Whether the request is reported to the audit trail (its caller named by `auditAs`): the rest need no summary. */
export function isAudited(ctx: Context): boolean {
  return (ctx.state as AuditState).auditCaller !== undefined;
}

export function noteAudit(ctx: Context, note: AuditNote): void {
  const state = ctx.state as AuditState;
  state.audit = { ...state.audit, ...note };
}

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/** Reports stay small whatever a request carried (a long key id in a path, a long key name). */
const MAX_SUMMARY = 500;
const MAX_PATH = 1000;

function clipped(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Stores one report; one that cannot be stored is logged, not thrown (the change was made). */
export async function appendAudit(
  sink: AuditSink,
  report: AuditReport,
  log: Logger | undefined,
): Promise<void> {
  await sink.append(report).catch((err: unknown) => {
    log?.warn({ error: loggableError(err) }, "audit entry could not be stored");
  });
}

/** Runs the request and reports it to the sink (changes only). */
export async function audited(
  ctx: Context,
  sink: AuditSink,
  caller: AdminCaller,
  account: string | undefined,
  run: () => Promise<void>,
): Promise<void> {
  if (READ_METHODS.has(ctx.method)) return run();
  auditAs(ctx, caller, account);
  return auditedWhenAdmin(ctx, sink, run);
}

/**
 * Names the administrator a request turned out to come from, once its handler
 * knows (the data API learns it from the key): `auditedWhenAdmin` reports it.
 */
export function auditAs(ctx: Context, caller: AdminCaller, account: string | undefined): void {
  (ctx.state as AuditState).auditCaller = { caller, account };
}

/**
 * Runs the request and reports it to the sink (changes only) when, by its end,
 * it was found to be an administrator's (`auditAs`): for routes anyone with a key
 * may call (the data API), where only administrators' changes are audited.
 */
export async function auditedWhenAdmin(
  ctx: Context,
  sink: AuditSink,
  run: () => Promise<void>,
): Promise<void> {
  if (READ_METHODS.has(ctx.method)) return run();
  let failure: unknown;
  try {
    await run();
  } catch (err) {
    failure = err;
  }
  const state = ctx.state as AuditState;
  if (state.auditCaller && !state.audit?.skip) {
    const apiError = failure instanceof ApiError ? failure : undefined;
    const status = failure === undefined ? ctx.status : (apiError?.statusCode ?? 500);
    const report: AuditReport = {
      account: state.auditCaller.account,
      accountUid: state.audit?.accountUid,
      actor: actorOf(state.auditCaller.caller),
      method: ctx.method,
      path: clipped(shownPath(ctx), MAX_PATH),
      summary: clipped(state.audit?.summary ?? "", MAX_SUMMARY),
      status,
      requestId: state.requestId,
    };
    if (state.clientRequestId !== undefined) report.clientRequestId = state.clientRequestId;
    if (failure !== undefined) report.errorCode = apiError?.errorCode ?? 5001;
    await appendAudit(sink, report, state.log);
  }
  if (failure !== undefined) throw failure;
}
