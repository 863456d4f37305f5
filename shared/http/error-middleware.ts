/**
 * The one error middleware of a service: every failure leaves as the documented
 * body `{statusCode, errorCode, errorMessage, requestId}`; server errors are
 * logged by name, message fingerprint and stack frames (a message can quote
 * request data: shared/loggable-error.ts), and unexpected ones are answered
 * 500/5001 without internals.
 */
import type { Context, Middleware, Next } from "koa";
import { ApiError, errors } from "../errors.ts";
import { loggableError } from "../loggable-error.ts";
import type { RequestState } from "./request-context.ts";

/** Turns a client library's error into the service's own (e.g. a store that is away → 503), or leaves it. */
export type ErrorTranslator = (err: unknown) => ApiError | undefined;

/** `translators`: from the service's stores (store/mongo-errors.ts, shared/redis-errors.ts), tried in order. */
export function errorMiddleware(translators: ErrorTranslator[] = []): Middleware {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      // What the router answers by itself (no route; a route without this verb) gets the documented body too.
      if (ctx.body === undefined) {
        if (ctx.status === 404) throw errors.notFound(`No resource at ${ctx.path}`);
        if (ctx.status === 405 || ctx.status === 501) throw errors.methodNotAllowed(ctx.method);
      }
    } catch (err) {
      const state = ctx.state as RequestState;
      const apiError = toApiError(err, translators);
      if (apiError.statusCode >= 500) state.log?.error({ error: loggableError(err) }, "request failed");
      ctx.status = apiError.statusCode;
      ctx.set(apiError.headers);
      ctx.body = apiError.body(state.requestId);
    }
  };
}

function toApiError(err: unknown, translators: ErrorTranslator[]): ApiError {
  if (err instanceof ApiError) return err;
  for (const translate of translators) {
    const translated = translate(err);
    if (translated) return translated;
  }
  const status = (err as { status?: number; expose?: boolean })?.status;
  // Koa/http-errors raised by the framework itself (e.g. a malformed URL).
  if (typeof status === "number" && status >= 400 && status < 500) {
    if (status === 413) return errors.tooLarge(0);
    return errors.malformed((err as Error).message || "Malformed request");
  }
  return errors.internal();
}
