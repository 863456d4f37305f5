/**
 * Request id, a child logger that carries it, and one access-log line per
 * request with the URL's `auth` parameter redacted. The request id is always
 * stamped here (answered as `X-Request-Id` and in error bodies), never taken
 * from the request: a caller cannot give two requests one id (the audit trail
 * records it). A well-formed X-Request-Id the request came with — the client's,
 * the edge's, or the calling service's own request id — is kept as
 * `clientRequestId` and logged with every line, so a trace can be followed
 * from one service to the next.
 */
import { randomUUID } from "node:crypto";
import type { Context, Middleware, Next } from "koa";
import { type Logger, redactUrl } from "../logger.ts";

export interface RequestState {
  /** Stamped by this service for this request. */
  requestId: string;
  /** The X-Request-Id the request came with, when well-formed. */
  clientRequestId?: string;
  log: Logger;
  /** The path as logs and the audit trail show it, when a handler hid part of it (hidePath). */
  shownPath?: string;
}

/**
 * Shows `path` instead of the request's path in its log line and audit entry: for
 * a handler whose path may hold a secret sent by mistake (a key's value where its
 * id belongs).
 */
export function hidePath(ctx: Context, path: string): void {
  (ctx.state as RequestState).shownPath = path;
}

/** The request's path as logs and the audit trail show it. */
export function shownPath(ctx: Context): string {
  return (ctx.state as RequestState).shownPath ?? ctx.path;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

function loggedUrl(ctx: Context): string {
  const shown = (ctx.state as RequestState).shownPath;
  return shown === undefined ? ctx.originalUrl : `${shown}${ctx.search}`;
}

export function requestContext(logger: Logger): Middleware {
  return async (ctx: Context, next: Next) => {
    const incoming = ctx.get("x-request-id");
    const clientRequestId = REQUEST_ID.test(incoming) ? incoming : undefined;
    const requestId = randomUUID();
    const state = ctx.state as RequestState;
    state.requestId = requestId;
    if (clientRequestId !== undefined) state.clientRequestId = clientRequestId;
    const bindings = clientRequestId === undefined ? { requestId } : { requestId, clientRequestId };
    // Made when a handler first logs: most requests log nothing but their access line, written
    // below with the same fields through the service's logger.
    let log: Logger | undefined;
    Object.defineProperty(state, "log", {
      configurable: true,
      enumerable: true,
      get: () => (log ??= logger.child(bindings)),
      set: (value: Logger) => {
        log = value;
      },
    });
    ctx.set("X-Request-Id", requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      // The line's fields are made only when it is written (LOG_LEVEL above info writes none).
      if ((log ?? logger).isLevelEnabled("info")) {
        const ms = Math.round((performance.now() - started) * 10) / 10;
        const access = { method: ctx.method, url: redactUrl(loggedUrl(ctx)), status: ctx.status, ms };
        if (log) log.info(access, "request");
        else logger.info({ ...bindings, ...access }, "request");
      }
    }
  };
}
