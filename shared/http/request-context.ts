/**
 * Request id (taken from X-Request-Id when it is well-formed, else generated),
 * a child logger that carries it, and one access-log line per request with the
 * URL's `auth` parameter redacted.
 */
import { randomUUID } from "node:crypto";
import type { Context, Middleware, Next } from "koa";
import { type Logger, redactUrl } from "../logger.ts";

export interface RequestState {
  requestId: string;
  log: Logger;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function requestContext(logger: Logger): Middleware {
  return async (ctx: Context, next: Next) => {
    const incoming = ctx.get("x-request-id");
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const state = ctx.state as RequestState;
    state.requestId = requestId;
    state.log = logger.child({ requestId });
    ctx.set("X-Request-Id", requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      state.log.info(
        { method: ctx.method, url: redactUrl(ctx.originalUrl), status: ctx.status, ms },
        "request",
      );
    }
  };
}
