/**
 * `tessera.fetchJson(url, {method, headers, body, timeoutMs})` for sandboxed
 * code: outbound HTTP(S) to the project's allowed hosts only, through the
 * data service's one outbound path (egress/http-request.ts: the host on the
 * allow-list, every address it resolves to public unicast — loopback too when
 * `allowLoopback` —, the connection made to the address that was checked, no
 * redirects followed, the answer's size and the time capped).
 *
 * Here: the script's arguments checked (method, headers, body), its requests
 * per call counted, the call's own deadline and end applied to the request,
 * and a JSON answer parsed.
 */
import { EgressError, type Resolver, sendRequest } from "../egress/http-request.ts";
import { SandboxHostError } from "./errors.ts";
import type { HostCallInfo, HostFunction, SandboxLogger } from "./types.ts";
import { silentLogger } from "./types.ts";

export interface FetchJsonOptions {
  /** Host names or IP literals, optionally `*.example.com` and/or `:port`. */
  allowedHosts: string[];
  /** Development only: loopback addresses are allowed in addition to public ones. */
  allowLoopback: boolean;
  /** Default 1 MiB. */
  maxResponseBytes?: number;
  /** Default 256 KiB. */
  maxRequestBytes?: number;
  /** Used when the script gives none. Default 5000. */
  defaultTimeoutMs?: number;
  /** Upper bound for the script's `timeoutMs`. Default 10000. */
  maxTimeoutMs?: number;
  /** Requests one sandbox call may make. Default 20. */
  maxRequestsPerCall?: number;
  /** Name resolution (tests replace it). Default: the system resolver (`dns.lookup`, all addresses). */
  resolve?: Resolver;
  logger?: SandboxLogger;
}

export interface FetchJsonResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the response says it is JSON (null when empty), else the text. */
  body: unknown;
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const FORBIDDEN_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "expect",
  "te",
  "trailer",
  "proxy-authorization",
  "proxy-connection",
  "accept-encoding",
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const MAX_HEADERS = 50;
const MAX_HEADER_VALUE = 8192;

function fail(message: string): never {
  throw new SandboxHostError(`fetchJson: ${message}`);
}

function isJsonType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const media = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  return media === "application/json" || media.endsWith("+json") || media === "text/json";
}

/** Builds the `tessera.fetchJson` host function for one project's allow-list. */
export function createFetchJson(options: FetchJsonOptions): HostFunction {
  const policy = {
    allowedHosts: options.allowedHosts,
    allowLoopback: options.allowLoopback,
    resolve: options.resolve,
  };
  const maxResponseBytes = options.maxResponseBytes ?? 1024 * 1024;
  const maxRequestBytes = options.maxRequestBytes ?? 256 * 1024;
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 5000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 10_000;
  const maxRequestsPerCall = options.maxRequestsPerCall ?? 20;
  const logger = options.logger ?? silentLogger;

  return async function fetchJson(args: unknown[], info: HostCallInfo): Promise<FetchJsonResponse> {
    const count = ((info.callState.get("fetchJson.requests") as number | undefined) ?? 0) + 1;
    info.callState.set("fetchJson.requests", count);
    if (count > maxRequestsPerCall) fail(`more than ${maxRequestsPerCall} requests in one call`);

    const [urlArg, initArg] = args;
    if (typeof urlArg !== "string") fail("the URL must be a string");
    if (
      initArg !== undefined &&
      initArg !== null &&
      (typeof initArg !== "object" || Array.isArray(initArg))
    ) {
      fail("the options must be an object");
    }
    const init = (initArg ?? {}) as {
      method?: unknown;
      headers?: unknown;
      body?: unknown;
      timeoutMs?: unknown;
    };

    const method = init.method === undefined ? "GET" : String(init.method).toUpperCase();
    if (!METHODS.has(method)) fail(`method ${method.slice(0, 20)} is not allowed`);

    const headers: Record<string, string> = {};
    if (init.headers !== undefined && init.headers !== null) {
      if (typeof init.headers !== "object" || Array.isArray(init.headers)) fail("headers must be an object");
      const entries = Object.entries(init.headers as Record<string, unknown>);
      if (entries.length > MAX_HEADERS) fail(`more than ${MAX_HEADERS} headers`);
      for (const [name, value] of entries) {
        const lower = name.toLowerCase();
        if (!TOKEN.test(name)) fail(`invalid header name ${JSON.stringify(name.slice(0, 40))}`);
        if (FORBIDDEN_HEADERS.has(lower)) fail(`header ${lower} cannot be set`);
        if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
          fail(`header ${lower} must be a string`);
        }
        const text = String(value);
        if (text.length > MAX_HEADER_VALUE || /[\r\n\0]/.test(text))
          fail(`invalid value for header ${lower}`);
        headers[lower] = text;
      }
    }

    let payload: Buffer | undefined;
    if (init.body !== undefined && init.body !== null) {
      if (method === "GET" || method === "HEAD") fail(`a ${method} request cannot have a body`);
      if (typeof init.body === "string") {
        payload = Buffer.from(init.body, "utf8");
        headers["content-type"] ??= "text/plain; charset=utf-8";
      } else {
        payload = Buffer.from(JSON.stringify(init.body), "utf8");
        headers["content-type"] ??= "application/json";
      }
      if (payload.length > maxRequestBytes) fail(`the request body is larger than ${maxRequestBytes} bytes`);
    }
    headers.accept ??= "application/json";
    headers["user-agent"] ??= "Tessera-Sandbox/1";
    headers["accept-encoding"] = "identity";

    const requested = init.timeoutMs === undefined ? defaultTimeoutMs : Number(init.timeoutMs);
    const budget = Math.floor(
      Math.min(Number.isFinite(requested) && requested > 0 ? requested : defaultTimeoutMs, maxTimeoutMs),
    );
    const started = Date.now();
    const timeoutMs = Math.min(budget, info.deadline - started);
    if (timeoutMs <= 0) fail("no time is left in this call");

    let response: Awaited<ReturnType<typeof sendRequest>>;
    try {
      response = await sendRequest(policy, {
        url: urlArg,
        method,
        headers,
        body: payload,
        timeoutMs,
        maxResponseBytes,
        signal: info.signal,
      });
    } catch (e) {
      if (!(e instanceof EgressError)) throw e;
      if (e.reason === "refused")
        logger.warn(
          { programKey: info.programKey, host: new URL(urlArg).hostname, addressClass: e.addressClass },
          "sandbox fetch refused: the host resolves to a non-public address",
        );
      if (e.reason === "aborted") fail("the call ended");
      fail(e.message);
    }
    const text = response.body.toString("utf8");
    let body: unknown = text;
    if (isJsonType(response.headers["content-type"])) {
      if (text.trim() === "") body = null;
      else {
        try {
          body = JSON.parse(text);
        } catch {
          fail("the response says it is JSON but does not parse");
        }
      }
    }
    return { status: response.status, headers: response.headers, body };
  };
}
