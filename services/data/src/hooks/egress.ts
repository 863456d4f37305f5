/**
 * Sending one webhook delivery: an HTTP POST through the same egress policy as
 * custom providers' `tessera.fetchJson` (sandbox/fetch.ts, sandbox/net-policy.ts):
 * public unicast addresses only — loopback too when the operator allows it
 * (SANDBOX_ALLOW_LOOPBACK_FETCH), never private ranges, link-local (the cloud
 * metadata address) or reserved ones — resolved once and connected to as
 * checked, no redirects followed, answer size and time capped.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { createFetchJson, type FetchJsonResponse } from "../sandbox/fetch.ts";
import type { SandboxLogger } from "../sandbox/index.ts";
import { classifyAddress, isAddressAllowed } from "../sandbox/net-policy.ts";

export interface EgressOptions {
  allowLoopback: boolean;
  timeoutMs: number;
  logger: SandboxLogger;
}

/** What one attempt came to: the receiver's status, or why there was none. */
export interface AttemptResult {
  status: number | null;
  error: string | null;
  latencyMs: number;
}

/** The egress policy's allow-list entry of a URL's host (with its port when it names one). */
function hostEntry(url: URL): string {
  return url.port ? `${url.hostname}:${url.port}` : url.hostname;
}

/** Why the egress policy refuses the URL's host as it resolves now, or undefined (checked when a subscription is made). */
export async function egressProblem(text: string, allowLoopback: boolean): Promise<string | undefined> {
  const hostname = new URL(text).hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = isIP(hostname)
      ? [hostname]
      : (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return `${hostname} could not be resolved`;
  }
  const refused = addresses.find((a) => !isAddressAllowed(a, allowLoopback));
  return refused === undefined
    ? undefined
    : `${hostname} is a ${classifyAddress(refused)} address, which deliveries may not reach`;
}

/** POSTs `body` to `url` with `headers`; a 2xx answer is a delivery, anything else a failure. */
export async function postWebhook(
  options: EgressOptions,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<AttemptResult> {
  const target = new URL(url);
  const fetchJson = createFetchJson({
    allowedHosts: [hostEntry(target)],
    allowLoopback: options.allowLoopback,
    logger: options.logger,
    defaultTimeoutMs: options.timeoutMs,
    maxTimeoutMs: options.timeoutMs,
    maxRequestBytes: 16 * 1024 * 1024,
    maxResponseBytes: 64 * 1024,
  });
  const controller = new AbortController();
  const started = performance.now();
  try {
    const response = (await fetchJson(
      [
        url,
        { method: "POST", headers: { ...headers, accept: "*/*", "user-agent": "Tessera-Webhooks/1" }, body },
      ],
      {
        programKey: "webhooks",
        context: undefined,
        signal: controller.signal,
        deadline: Date.now() + options.timeoutMs,
        callState: new Map(),
      },
    )) as FetchJsonResponse;
    const latencyMs = Math.round(performance.now() - started);
    const ok = response.status >= 200 && response.status < 300;
    return { status: response.status, error: ok ? null : `answered ${response.status}`, latencyMs };
  } catch (err) {
    const message = err instanceof Error ? err.message.replace(/^fetchJson: /, "") : String(err);
    return { status: null, error: message, latencyMs: Math.round(performance.now() - started) };
  } finally {
    controller.abort();
  }
}
