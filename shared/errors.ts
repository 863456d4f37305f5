/**
 * The one error type of both services (codes: docs/errors.md). Anything thrown that is
 * not an ApiError is reported as 500/5001 without internals.
 */
export const ErrorCode = {
  malformed: 4001,
  badFilter: 4002,
  badAttribute: 4003,
  validationFailed: 4004,
  webhookUrlRefused: 4005,
  noKey: 4011,
  wrongScope: 4012,
  keyExpired: 4013,
  keyDisabled: 4014,
  loginFailed: 4015,
  forbidden: 4031,
  quotaExceeded: 4032,
  notFound: 4041,
  keyNotFound: 4042,
  methodNotAllowed: 4051,
  conflict: 4091,
  limitReached: 4092,
  preconditionFailed: 4121,
  tooLarge: 4131,
  requestLineTooLong: 4141,
  unsupportedMediaType: 4151,
  tooManyAttempts: 4291,
  rateLimited: 4292,
  sandboxShareUsed: 4293,
  tooManyStreams: 4295,
  internal: 5001,
  unavailable: 5031,
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ErrorBody {
  statusCode: number;
  errorCode: number;
  errorMessage: string;
  requestId?: string;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  readonly statusCode: number;
  readonly errorCode: number;
  readonly headers: Record<string, string>;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    statusCode: number,
    errorCode: number,
    message: string,
    options: { headers?: Record<string, string>; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ApiError";
    this.statusCode = statusCode;
    this.errorCode = errorCode;
    this.headers = options.headers ?? {};
    this.details = options.details;
  }

  body(requestId?: string): ErrorBody {
    return {
      statusCode: this.statusCode,
      errorCode: this.errorCode,
      errorMessage: this.message,
      ...(this.details ?? {}),
      ...(requestId ? { requestId } : {}),
    };
  }
}

/** Constructors for the documented errors, so call sites read as what they mean. */
export const errors = {
  malformed: (msg: string, details?: Record<string, unknown>) =>
    new ApiError(400, ErrorCode.malformed, msg, { details }),
  badFilter: (msg: string) => new ApiError(400, ErrorCode.badFilter, msg),
  badAttribute: (msg: string) => new ApiError(400, ErrorCode.badAttribute, msg),
  validationFailed: (msg: string, details?: Record<string, unknown>) =>
    new ApiError(400, ErrorCode.validationFailed, msg, { details }),
  noKey: (msg = "No API key was supplied, or it cannot be read") => new ApiError(401, ErrorCode.noKey, msg),
  unknownKey: () => new ApiError(401, ErrorCode.noKey, "The API key is not recognised"),
  wrongScope: () =>
    new ApiError(401, ErrorCode.wrongScope, "The API key cannot be used for this account or project"),
  keyExpired: () => new ApiError(401, ErrorCode.keyExpired, "The API key has expired"),
  keyDisabled: () => new ApiError(401, ErrorCode.keyDisabled, "The API key has been disabled"),
  /** One body whatever the reason; `detail` only when a custom provider's project opted in to show its message. */
  loginFailed: (detail?: string) =>
    new ApiError(
      401,
      ErrorCode.loginFailed,
      detail ? `Login failed: ${detail}` : "Login failed: unknown user or wrong password",
    ),
  forbidden: (msg: string) => new ApiError(403, ErrorCode.forbidden, msg),
  notFound: (msg: string) => new ApiError(404, ErrorCode.notFound, msg),
  /**
   * An account that does not exist — and, to an account administrator, every other
   * account: one body for both, so that it tells nothing about which accounts exist.
   */
  noAccount: (account: string) => new ApiError(404, ErrorCode.notFound, `No account '${account}'`),
  keyNotFound: () => new ApiError(404, ErrorCode.keyNotFound, "No such API key"),
  methodNotAllowed: (method: string) =>
    new ApiError(405, ErrorCode.methodNotAllowed, `Method ${method} is not allowed here`),
  conflict: (msg: string) => new ApiError(409, ErrorCode.conflict, msg),
  /** A count the deployment limits (`setting`) is reached: nothing was made. */
  limitReached: (what: string, limit: number, setting: string) =>
    new ApiError(
      409,
      ErrorCode.limitReached,
      `${what}: the limit is ${limit} (${setting}); nothing was made`,
      { details: { limit } },
    ),
  preconditionFailed: (msg: string) => new ApiError(412, ErrorCode.preconditionFailed, msg),
  tooLarge: (limit: number) =>
    new ApiError(413, ErrorCode.tooLarge, `Request body is larger than the limit of ${limit} bytes`),
  /** The request line (method, path and query) is longer than the edge reads. */
  requestLineTooLong: (limit: number) =>
    new ApiError(
      414,
      ErrorCode.requestLineTooLong,
      `The request line (path and query) is longer than the limit of ${limit} bytes`,
    ),
  unsupportedMediaType: () =>
    new ApiError(
      415,
      ErrorCode.unsupportedMediaType,
      "Request body must be JSON (Content-Type: application/json)",
    ),
  tooManyAttempts: (retryAfterSeconds: number) =>
    new ApiError(429, ErrorCode.tooManyAttempts, "Too many failed attempts; try again later", {
      headers: { "Retry-After": String(retryAfterSeconds) },
    }),
  /** A login waited LOGIN_QUEUE_WAIT_SECONDS for other logins of the same identity to be answered. */
  attemptsInFlight: (retryAfterSeconds: number) =>
    new ApiError(
      503,
      ErrorCode.unavailable,
      "Other logins of this identity are still being checked; nothing was verified, try again",
      { headers: { "Retry-After": String(retryAfterSeconds) } },
    ),
  /** The account's or the key's request rate limit; `headers`: `RateLimit`, `RateLimit-Policy`, `Retry-After`. */
  rateLimited: (headers: Record<string, string>) =>
    new ApiError(429, ErrorCode.rateLimited, "Too many requests for this account or key; try again later", {
      headers,
    }),
  /** The account's JavaScript (providers, rules, resources, events) used its share of the sandbox for now. */
  sandboxShareUsed: (retryAfterSeconds: number) =>
    new ApiError(
      429,
      ErrorCode.sandboxShareUsed,
      "The account's JavaScript has used its share of the sandbox for now; try again later",
      { headers: { "Retry-After": String(retryAfterSeconds) } },
    ),
  /**
   * A write or a change would pass a limit of the account's plan (docs/tenants.md#quotas): refused
   * whole. The body names the limit, its value, the current use and the plan.
   */
  quotaExceeded: (quota: { limit: string; value: number; used: number; plan: string; what: string }) =>
    new ApiError(
      403,
      ErrorCode.quotaExceeded,
      `The account's plan '${quota.plan}' allows ${quota.value} ${quota.what} (limit ${quota.limit}); ` +
        `${quota.used} in use. Nothing was written: delete some, or ask the platform operator for a larger plan`,
      { details: { quota: { limit: quota.limit, value: quota.value, used: quota.used, plan: quota.plan } } },
    ),
  internal: () => new ApiError(500, ErrorCode.internal, "Unexpected error"),
  unavailable: (what: string, cause?: unknown) =>
    new ApiError(503, ErrorCode.unavailable, `${what} is unavailable; nothing was written`, { cause }),
  /** A service took the request and gave no answer (it died, say): what it did is not known. */
  unanswered: (what: string) =>
    new ApiError(
      503,
      ErrorCode.unavailable,
      `${what} did not answer; the request may or may not have been carried out (read before writing again)`,
    ),
  /** A store query ran past its time limit (QUERY_TIMEOUT_MS): an expensive filter, or a store under load. */
  queryTimedOut: (cause?: unknown) =>
    new ApiError(
      503,
      ErrorCode.unavailable,
      "A query took longer than its time limit; nothing was written. Narrow the filter or ask for fewer rows, then try again",
      { cause },
    ),
};
