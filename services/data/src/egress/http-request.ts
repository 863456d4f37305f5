/**
 * The data service's one outbound HTTP path (docs/architecture.md#outbound-http): webhook
 * deliveries (hooks/), the oidc provider's fetches of its issuer (providers/) and custom
 * providers' `tessera.fetchJson` (sandbox/fetch.ts) all send through `sendRequest`.
 *
 * - http and https only, no credentials in the URL, the host on the caller's allow-list when it
 *   gives one;
 * - the name is resolved here and every address it resolves to must be public unicast
 *   (net-policy.ts; loopback too when the operator allows it); the connection goes to the address
 *   that was checked, so a second DNS answer (rebinding) cannot redirect it; TLS still verifies
 *   the certificate against the name;
 * - HTTP/1.1 through undici, one connection per request, closed when it ends; redirects are not
 *   followed (a 3xx comes back as it is);
 * - one time limit for the whole exchange (resolution, connection, answer and its body), and a
 *   bound on the answer's body: past it the answer is refused (`answerBody: "keep"`), or read up
 *   to it and dropped (`answerBody: "drop"`, where only the status matters).
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { buildConnector, Client } from "undici";
import {
  type AddressClass,
  classifyAddress,
  type HostRule,
  hostAllowed,
  isAddressAllowed,
  parseHostRule,
} from "./net-policy.ts";

/** Name resolution: every address of a name (tests give their own). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** Where requests may go: the operator's loopback switch, an optional host allow-list, the resolver. */
export interface EgressPolicy {
  /** SANDBOX_ALLOW_LOOPBACK_FETCH: loopback addresses are allowed besides public ones (development). */
  allowLoopback: boolean;
  /** Host names or IP literals (`*.example.com`, `:port` allowed); none: any host. */
  allowedHosts?: readonly string[];
  resolve?: Resolver;
}

export interface EgressRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** The whole exchange's time limit. */
  timeoutMs: number;
  /** The answer's body is read up to this many bytes. */
  maxResponseBytes: number;
  /** `keep` (default): a larger answer is refused; `drop`: it is read up to the bound, within the time, and dropped. */
  answerBody?: "keep" | "drop";
  /** Ends the request early (the caller's own end); its end is reported as `aborted`. */
  signal?: AbortSignal;
}

export interface EgressResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The body (empty with `answerBody: "drop"`). */
  body: Buffer;
}

/** Why a request got no answer. */
export type EgressFailure =
  | "invalid" // the URL or the request is not one that may be sent
  | "not-allowed" // the host is not on the allow-list
  | "refused" // the host resolves to an address the policy refuses
  | "unresolved"
  | "timeout"
  | "too-large"
  | "aborted" // the caller's signal
  | "failed"; // connection refused, reset, cut off, TLS...

export class EgressError extends Error {
  readonly reason: EgressFailure;
  /** For `refused`: the class of the address that was refused. */
  readonly addressClass: AddressClass | undefined;

  constructor(reason: EgressFailure, message: string, addressClass?: AddressClass) {
    super(message);
    this.name = "EgressError";
    this.reason = reason;
    this.addressClass = addressClass;
  }
}

const MAX_HEADER_BYTES = 16 * 1024;

async function systemResolve(hostname: string): Promise<{ address: string; family: number }[]> {
  return lookup(hostname, { all: true, verbatim: true });
}

/** The URL's host as connections name it: lower case, no brackets, no trailing dot. */
function bareHost(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.$/, "");
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

/** The URL, checked: http(s), no credentials, a host the allow-list (when given) names. */
function checkedUrl(text: string, rules: HostRule[] | undefined): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new EgressError("invalid", "the URL is not valid");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new EgressError("invalid", "only http and https URLs are allowed");
  if (url.username || url.password)
    throw new EgressError("invalid", "credentials in the URL are not allowed; send an Authorization header");
  const host = bareHost(url);
  if (rules && !hostAllowed(rules, host, portOf(url)))
    throw new EgressError("not-allowed", `${host} is not one of the allowed hosts`);
  return url;
}

/** Rejects when `signal` aborts, with what `failure()` says then. */
function onAbort(signal: AbortSignal, failure: () => EgressError): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(failure());
    else signal.addEventListener("abort", () => reject(failure()), { once: true });
  });
}

/**
 * The address a request to `url` may connect to: the name resolved (within `signal`'s time), every
 * address checked against the policy, the first one.
 */
async function checkedAddress(
  url: URL,
  policy: EgressPolicy,
  signal: AbortSignal,
  failure: () => EgressError,
): Promise<{ address: string; family: number }> {
  const host = bareHost(url);
  const family = isIP(host);
  let addresses: { address: string; family: number }[];
  if (family !== 0) addresses = [{ address: host, family }];
  else {
    const resolving = (policy.resolve ?? systemResolve)(host);
    resolving.catch(() => {});
    try {
      addresses = await Promise.race([resolving, onAbort(signal, failure)]);
    } catch (err) {
      if (err instanceof EgressError) throw err;
      throw new EgressError("unresolved", `${host} could not be resolved`);
    }
  }
  const [first] = addresses;
  if (!first) throw new EgressError("unresolved", `${host} could not be resolved`);
  for (const { address } of addresses)
    if (!isAddressAllowed(address, policy.allowLoopback)) {
      const cls = classifyAddress(address);
      throw new EgressError("refused", `${host} resolves to a ${cls} address, which is not allowed`, cls);
    }
  return first;
}

/**
 * Why the policy refuses the URL's host as it resolves now, or undefined (a URL checked ahead of its
 * requests, a webhook subscription's when it is made, say).
 */
export async function hostRefusal(text: string, policy: EgressPolicy): Promise<string | undefined> {
  try {
    const url = checkedUrl(text, rulesOf(policy));
    await checkedAddress(url, policy, new AbortController().signal, () => new EgressError("aborted", ""));
    return undefined;
  } catch (err) {
    if (err instanceof EgressError) return err.message;
    throw err;
  }
}

/** The allow-list's rules (an entry that cannot match is left out); undefined: no allow-list. */
function rulesOf(policy: EgressPolicy): HostRule[] | undefined {
  return policy.allowedHosts?.map(parseHostRule).filter((r): r is HostRule => r !== undefined);
}

function headerRecord(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  return out;
}

/** What an undici failure was, in words a log or a script may show. */
function failureOf(err: unknown, host: string): EgressError {
  const code = (err as { code?: unknown }).code;
  if (code === "UND_ERR_HEADERS_OVERFLOW")
    return new EgressError(
      "failed",
      `the answer of ${host} has headers larger than ${MAX_HEADER_BYTES} bytes`,
    );
  const named = typeof code === "string" && /^[A-Z_]{2,40}$/.test(code) ? ` (${code})` : "";
  return new EgressError("failed", `the request to ${host} failed${named}`);
}

/** A connector that opens every connection to `address` (checked), naming `servername` to TLS. */
function pinnedConnector(address: string, servername: string | undefined, timeoutMs: number) {
  const connect = buildConnector({ allowH2: false, maxCachedSessions: 0, timeout: timeoutMs });
  return (options: buildConnector.Options, callback: buildConnector.Callback) =>
    connect({ ...options, hostname: address, ...(servername ? { servername } : {}) }, callback);
}

/**
 * Sends one request under `policy` (see the module's comment); the answer whatever its status, or
 * an EgressError saying why there is none.
 */
export async function sendRequest(policy: EgressPolicy, request: EgressRequest): Promise<EgressResponse> {
  const url = checkedUrl(request.url, rulesOf(policy));
  const host = bareHost(url);
  const timeoutMs = Math.max(1, Math.floor(request.timeoutMs));
  const timer = AbortSignal.timeout(timeoutMs);
  const signal = request.signal ? AbortSignal.any([timer, request.signal]) : timer;
  const failure = () =>
    request.signal?.aborted
      ? new EgressError("aborted", "the request was ended by its caller")
      : new EgressError("timeout", `no complete response within ${timeoutMs} ms`);
  const max = request.maxResponseBytes;
  const tooLarge = () => new EgressError("too-large", `the response is larger than ${max} bytes`);
  const target = await checkedAddress(url, policy, signal, failure);
  if (signal.aborted) throw failure();
  const client = new Client(url.origin, {
    connect: pinnedConnector(target.address, isIP(host) === 0 ? host : undefined, timeoutMs),
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: 0,
    bodyTimeout: 0,
    pipelining: 1,
  });
  try {
    let answer: Awaited<ReturnType<Client["request"]>>;
    try {
      answer = await client.request({
        path: `${url.pathname}${url.search}`,
        method: (request.method ?? "GET") as "GET",
        headers: request.headers,
        body: request.body,
        signal,
      });
    } catch (err) {
      throw signal.aborted ? failure() : failureOf(err, host);
    }
    const status = answer.statusCode;
    const headers = headerRecord(answer.headers);
    const declared = Number(headers["content-length"]);
    const keep = request.answerBody !== "drop";
    if (keep && Number.isFinite(declared) && declared > max) throw tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of answer.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > max) {
          if (keep) throw tooLarge();
          break;
        }
        if (keep) chunks.push(chunk);
      }
    } catch (err) {
      if (err instanceof EgressError) throw err;
      // With `drop` the status is the answer: a body cut off or late does not change it.
      if (keep) throw signal.aborted ? failure() : new EgressError("failed", "the response was cut off");
    }
    return { status, headers, body: Buffer.concat(chunks) };
  } finally {
    client.destroy().catch(() => {});
  }
}
