/**
 * `tessera.fetchJson(url, {method, headers, body, timeoutMs})` for sandboxed
 * code: outbound HTTP(S) to the project's allowed hosts only.
 *
 * - http and https only; no credentials in the URL.
 * - The host (name or IP literal, optionally with a port) must be on the allow-list.
 * - The name is resolved here and every address it resolves to must be public
 *   unicast (see net-policy.ts; loopback too when `allowLoopback`). The request
 *   then connects to the address that was checked, so a second DNS answer
 *   (rebinding) cannot redirect it. TLS still verifies the certificate against
 *   the host name.
 * - Redirects are not followed (a 3xx comes back as it is).
 * - Request body, response size and time are capped; the call's own deadline
 *   caps the time too, and the request is aborted when the call ends.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { SandboxHostError } from "./errors.ts";
import {
  classifyAddress,
  type HostRule,
  hostAllowed,
  isAddressAllowed,
  parseHostRule,
} from "./net-policy.ts";
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
  resolve?: (hostname: string) => Promise<{ address: string; family: number }[]>;
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

async function systemResolve(hostname: string): Promise<{ address: string; family: number }[]> {
  return dnsLookup(hostname, { all: true, verbatim: true });
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SandboxHostError(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Builds the `tessera.fetchJson` host function for one project's allow-list. */
export function createFetchJson(options: FetchJsonOptions): HostFunction {
  const rules = options.allowedHosts.map(parseHostRule).filter((r): r is HostRule => r !== undefined);
  const maxResponseBytes = options.maxResponseBytes ?? 1024 * 1024;
  const maxRequestBytes = options.maxRequestBytes ?? 256 * 1024;
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 5000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 10_000;
  const maxRequestsPerCall = options.maxRequestsPerCall ?? 20;
  const resolve = options.resolve ?? systemResolve;
  const logger = options.logger ?? silentLogger;
  const allowLoopback = options.allowLoopback;

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

    let url: URL;
    try {
      url = new URL(urlArg);
    } catch {
      fail("the URL is not valid");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") fail("only http and https URLs are allowed");
    if (url.username || url.password)
      fail("credentials in the URL are not allowed; send an Authorization header");
    const hostname = url.hostname
      .replace(/^\[|\]$/g, "")
      .toLowerCase()
      .replace(/\.$/, "");
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    if (!hostAllowed(rules, hostname, port)) fail(`${hostname} is not one of the project's allowed hosts`);

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
    headers.host = url.host;
    if (payload) headers["content-length"] = String(payload.length);

    const requested = init.timeoutMs === undefined ? defaultTimeoutMs : Number(init.timeoutMs);
    const budget = Math.floor(
      Math.min(Number.isFinite(requested) && requested > 0 ? requested : defaultTimeoutMs, maxTimeoutMs),
    );
    const started = Date.now();
    const timeoutMs = Math.min(budget, info.deadline - started);
    if (timeoutMs <= 0) fail("no time is left in this call");

    // Resolve, then check every address; connect to the one that was checked.
    let addresses: { address: string; family: number }[];
    if (isIP(hostname)) {
      addresses = [{ address: hostname, family: isIP(hostname) }];
    } else {
      try {
        addresses = await withTimeout(
          resolve(hostname),
          timeoutMs,
          `fetchJson: resolving ${hostname} took too long`,
        );
      } catch (e) {
        if (e instanceof SandboxHostError) throw e;
        fail(`${hostname} could not be resolved`);
      }
    }
    const target = addresses[0];
    if (!target) fail(`${hostname} could not be resolved`);
    for (const a of addresses) {
      if (!isAddressAllowed(a.address, allowLoopback)) {
        logger.warn(
          { programKey: info.programKey, host: hostname, addressClass: classifyAddress(a.address) },
          "sandbox fetch refused: the host resolves to a non-public address",
        );
        fail(`${hostname} resolves to a ${classifyAddress(a.address)} address, which is not allowed`);
      }
    }
    const remaining = timeoutMs - (Date.now() - started);
    if (remaining <= 0) fail(`no response within ${timeoutMs} ms`);

    return await new Promise<FetchJsonResponse>((resolvePromise, reject) => {
      let settled = false;
      const finish = (error: Error | undefined, value?: FetchJsonResponse) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        info.signal.removeEventListener("abort", onAbort);
        if (error) {
          req.destroy();
          reject(error);
        } else {
          resolvePromise(value!);
        }
      };
      const onAbort = () => finish(new SandboxHostError("fetchJson: the call ended"));
      const timer = setTimeout(
        () => finish(new SandboxHostError(`fetchJson: no complete response within ${timeoutMs} ms`)),
        remaining,
      );
      const requestOptions: https.RequestOptions = {
        host: target.address,
        family: target.family,
        port,
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        agent: false,
        setHost: false,
        maxHeaderSize: 16 * 1024,
      };
      if (url.protocol === "https:" && !isIP(hostname)) requestOptions.servername = hostname;
      const transport = url.protocol === "https:" ? https : http;
      const req = transport.request(requestOptions, (res) => {
        const declared = Number(res.headers["content-length"]);
        if (Number.isFinite(declared) && declared > maxResponseBytes) {
          finish(new SandboxHostError(`fetchJson: the response is larger than ${maxResponseBytes} bytes`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) {
            finish(new SandboxHostError(`fetchJson: the response is larger than ${maxResponseBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on("error", () => finish(new SandboxHostError("fetchJson: the response was cut off")));
        res.on("close", () => {
          if (!res.complete) finish(new SandboxHostError("fetchJson: the response was cut off"));
        });
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const responseHeaders: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(", ") : value;
          }
          let body: unknown = text;
          if (isJsonType(res.headers["content-type"])) {
            if (text.trim() === "") {
              body = null;
            } else {
              try {
                body = JSON.parse(text);
              } catch {
                finish(new SandboxHostError("fetchJson: the response says it is JSON but does not parse"));
                return;
              }
            }
          }
          finish(undefined, { status: res.statusCode ?? 0, headers: responseHeaders, body });
        });
      });
      req.on("error", (e: NodeJS.ErrnoException) => {
        const code = typeof e.code === "string" && /^[A-Z_]{2,40}$/.test(e.code) ? ` (${e.code})` : "";
        finish(new SandboxHostError(`fetchJson: the request to ${hostname} failed${code}`));
      });
      info.signal.addEventListener("abort", onAbort, { once: true });
      if (info.signal.aborted) onAbort();
      if (payload) req.end(payload);
      else req.end();
    });
  };
}
