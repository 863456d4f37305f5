/**
 * What becomes of an event after one delivery attempt (docs/webhooks.md): a 2xx answer settles it;
 * anything else schedules a retry with back-off (backoff.ts) until the retry window has passed
 * since its first failure, then it is parked as a dead letter. Pure: the caller records the decision.
 */
import type { DeadLetter, RetryState } from "../store/webhook-store.ts";
import { type Backoff, retryDelayMs } from "./backoff.ts";
import type { AttemptResult } from "./egress.ts";
import type { Delivery } from "./payload.ts";

export interface RetryPolicy {
  /** How long after its first failure an event is tried again (WEBHOOK_RETRY_WINDOW_SECONDS). */
  retryWindowMs: number;
  backoff: Backoff;
}

/** The decision: settled, retried at `at` with `state`, or parked as `dead`; `attempt` counts this one (1: the first). */
export type AttemptOutcome =
  | { kind: "settle"; attempt: number }
  | { kind: "retry"; attempt: number; state: RetryState; at: number }
  | { kind: "park"; attempt: number; dead: DeadLetter };

/**
 * The outcome of an attempt of `delivery` that ended at `now` with `result`; `previous` is its
 * retry state when this attempt was a retry (null for a first attempt). `random` in [0, 1) picks
 * the back-off's jitter.
 */
export function attemptOutcome(
  delivery: Delivery,
  previous: RetryState | null,
  result: AttemptResult,
  policy: RetryPolicy,
  now: number,
  random: number = Math.random(),
): AttemptOutcome {
  const attempt = (previous?.attempts ?? 0) + 1;
  if (result.error === null) return { kind: "settle", attempt };
  const state: RetryState = {
    ...delivery,
    attempts: attempt,
    firstAttemptAt: previous?.firstAttemptAt ?? now,
    lastStatus: result.status,
    lastError: result.error,
  };
  if (now - state.firstAttemptAt >= policy.retryWindowMs)
    return { kind: "park", attempt, dead: { ...state, parkedAt: now } };
  return { kind: "retry", attempt, state, at: now + retryDelayMs(policy.backoff, attempt, random) };
}
