/**
 * Sending one webhook delivery: an HTTP POST through the data service's one outbound path
 * (egress/http-request.ts): public unicast addresses only — loopback too when the operator allows
 * it (SANDBOX_ALLOW_LOOPBACK_FETCH), never private ranges, link-local (the cloud metadata address)
 * or reserved ones — resolved once and connected to as checked, no redirects followed, within
 * WEBHOOK_TIMEOUT_MS. A 2xx answer is a delivery whatever its body, which is read up to a bound
 * and dropped.
 */
import { EgressError, hostRefusal, sendRequest } from "../egress/http-request.ts";

/** How much of a receiver's answer is read (and dropped). */
const ANSWER_BYTES = 64 * 1024;

export interface EgressOptions {
  allowLoopback: boolean;
  timeoutMs: number;
}

/** What one attempt came to: the receiver's status, or why there was none (`timedOut`: no answer in time). */
export interface AttemptResult {
  status: number | null;
  error: string | null;
  latencyMs: number;
  timedOut: boolean;
}

/** Why the egress policy refuses the URL's host as it resolves now, or undefined (checked when a subscription is made). */
export async function egressProblem(url: string, allowLoopback: boolean): Promise<string | undefined> {
  return hostRefusal(url, { allowLoopback });
}

/** POSTs `body` to `url` with `headers`; a 2xx answer is a delivery, anything else a failure. */
export async function postWebhook(
  options: EgressOptions,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const { status } = await sendRequest(
      { allowLoopback: options.allowLoopback },
      {
        url,
        method: "POST",
        headers: { ...headers, accept: "*/*", "user-agent": "Tessera-Webhooks/1" },
        body,
        timeoutMs: options.timeoutMs,
        maxResponseBytes: ANSWER_BYTES,
        answerBody: "drop",
      },
    );
    const ok = status >= 200 && status < 300;
    return { status, error: ok ? null : `answered ${status}`, latencyMs: elapsed(), timedOut: false };
  } catch (err) {
    if (!(err instanceof EgressError)) throw err;
    return { status: null, error: err.message, latencyMs: elapsed(), timedOut: err.reason === "timeout" };
  }
}
