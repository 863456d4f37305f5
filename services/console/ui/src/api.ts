/**
 * The console's HTTP client: same-origin calls to the admin and data APIs with
 * one credential, errors turned into ApiFailure (the documented error body), and
 * a 401 reported to whoever owns the credential (it signs the session out).
 */
import { pathResolvesAway } from "../../../../shared/names.ts";

export interface Problem {
  path: string;
  message: string;
}

export class ApiFailure extends Error {
  readonly status: number;
  readonly errorCode: number | undefined;
  readonly problems: Problem[];
  readonly requestId: string | undefined;

  constructor(status: number, body: unknown) {
    const b = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
    const message =
      typeof b.errorMessage === "string"
        ? b.errorMessage
        : `The server answered ${status} without an error body`;
    super(message);
    this.status = status;
    this.errorCode = typeof b.errorCode === "number" ? b.errorCode : undefined;
    this.problems = Array.isArray(b.problems) ? (b.problems as Problem[]) : [];
    this.requestId = typeof b.requestId === "string" ? b.requestId : undefined;
  }
}

export interface Reply<T> {
  status: number;
  body: T;
  headers: Headers;
  /** The answer as it came (a CSV answer, say, which is not JSON). */
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Aborts the call (a load that is no longer wanted): it then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface Client {
  call<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<Reply<T>>;
}

/**
 * A URL the server handed out (`next_batch`, `@metadata.href`) as a path on this
 * origin: the server may name another host (PUBLIC_BASE_URL), and the console
 * only ever talks to its own origin.
 */
export function localPath(url: string): string {
  const u = new URL(url, window.location.origin);
  return u.pathname + u.search;
}

/** Path segments are always encoded: a name can hold anything. */
export function seg(value: string): string {
  return encodeURIComponent(value);
}

async function send<T>(
  method: string,
  path: string,
  authorization: string | undefined,
  options: RequestOptions,
): Promise<Reply<T>> {
  if (pathResolvesAway(path)) {
    throw new ApiFailure(400, {
      errorMessage: "A name of dots only cannot be addressed in a URL (docs/names.md); nothing was sent.",
    });
  }
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (authorization) headers.authorization = authorization;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body,
      credentials: "omit",
      cache: "no-store",
      signal: options.signal,
    });
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    throw new ApiFailure(0, {
      errorMessage: "The server cannot be reached. Check the connection and retry.",
    });
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) throw new ApiFailure(response.status, parsed);
  return { status: response.status, body: parsed as T, headers: response.headers, text };
}

/** Calls without a credential (logins, login forms). */
export const anonymous: Client = {
  call: (method, path, options = {}) => send(method, path, undefined, options),
};

/** Calls with `authorization`; a 401 is reported to `onUnauthorized` before it is thrown. */
export function clientWith(authorization: string, onUnauthorized: (failure: ApiFailure) => void): Client {
  return {
    async call(method, path, options = {}) {
      try {
        return await send(method, path, authorization, options);
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 401 && !options.signal?.aborted) onUnauthorized(err);
        throw err;
      }
    },
  };
}

/** A page of a paged answer: its objects, and the next page's path when there is one. */
export interface Page<T> {
  items: T[];
  next: string | undefined;
}

export function pageOf<T>(answer: unknown): Page<T> {
  const all = Array.isArray(answer) ? [...answer] : [];
  const last = all.at(-1) as { "@metadata"?: { next_batch?: string } } | undefined;
  const nextBatch = last?.["@metadata"]?.next_batch;
  if (last && typeof nextBatch === "string" && Object.keys(last).length === 1) {
    all.pop();
    return { items: all as T[], next: localPath(nextBatch) };
  }
  return { items: all as T[], next: undefined };
}

/** Expirations come as UTC without a zone (`2025-03-01T12:00:00.000`); null means never. */
export function expirationTime(expiration: string | null | undefined): number | undefined {
  if (!expiration) return undefined;
  const withZone = /[zZ]|[+-]\d\d:\d\d$/.test(expiration) ? expiration : `${expiration}Z`;
  const t = Date.parse(withZone);
  return Number.isNaN(t) ? undefined : t;
}
