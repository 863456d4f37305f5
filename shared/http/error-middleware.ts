/**
 * The one error middleware of a service: every failure leaves as the documented
 * body `{statusCode, errorCode, errorMessage, requestId}`; unexpected errors are
 * logged with their stack and answered 500/5001 without internals.
 */
import type { Context, Middleware, Next } from "koa";
import { ApiError, errors } from "../errors.ts";
import type { RequestState } from "./request-context.ts";

export function errorMiddleware(): Middleware {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw errors.notFound(`No resource at ${ctx.path}`);
      }
    } catch (err) {
      const state = ctx.state as RequestState;
      const apiError = toApiError(err);
      if (apiError.statusCode >= 500) state.log?.error({ err }, "request failed");
      ctx.status = apiError.statusCode;
      ctx.set(apiError.headers);
      ctx.body = apiError.body(state.requestId);
    }
  };
}

/** Errors of the store clients that mean "the store is not reachable right now". */
const STORE_UNAVAILABLE =
  /^(Mongo(Network|NetworkTimeout|ServerSelection|NotConnected|Topology|PoolCleared)Error|MongooseServerSelectionError|MaxRetriesPerRequestError)$/;

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const name = (err as { name?: string })?.name ?? "";
  if (
    STORE_UNAVAILABLE.test(name) ||
    /Connection is closed|buffering timed out/.test(String((err as Error)?.message))
  ) {
    return errors.unavailable("A data store", err);
  }
  const status = (err as { status?: number; expose?: boolean })?.status;
  // Koa/http-errors raised by the framework itself (e.g. a malformed URL).
  if (typeof status === "number" && status >= 400 && status < 500) {
    if (status === 413) return errors.tooLarge(0);
    return errors.malformed((err as Error).message || "Malformed request");
  }
  return errors.internal();
}
