/**
 * A webhook subscription's circuit (docs/webhooks.md#isolation-and-the-circuit), pure logic: a
 * subscription whose attempts time out repeatedly is backed off as a whole, so that its
 * receiver stops holding the process's sending capacity.
 *
 * - closed: deliveries go as usual. `timeouts` attempts in a row without an answer within
 *   WEBHOOK_TIMEOUT_MS open it (an answer of any status, or a failure that is not a time-out,
 *   counts the row from zero again).
 * - open: nothing is sent until `until`, a cool-down that doubles each time it opens again
 *   without an answer in between (hooks/backoff.ts, WEBHOOK_CIRCUIT_OPEN_MS up to
 *   WEBHOOK_BACKOFF_CAP_MS); events wait (new ones in the feed's group, failed ones in the retry
 *   state) and are not counted as attempts.
 * - half-open: one process (`prober`) sends one attempt, the probe; it holds the probe until `until`
 *   (then another may take it). An answer closes the circuit, a time-out opens it again.
 */
import { z } from "zod";
import { readStoredJson } from "../../../../shared/stored-json.ts";
import { type Backoff, retryDelayMs } from "./backoff.ts";

export type CircuitState = "closed" | "open" | "half-open";

export interface Circuit {
  state: CircuitState;
  /** Attempts in a row that got no answer in time. */
  timeouts: number;
  /** Times it opened without an answer in between (its cool-down doubles with each). */
  opens: number;
  /** When it last opened (ms), null while closed. */
  openedAt: number | null;
  /** open: when a probe may go (ms); half-open: until when its prober holds the probe. */
  until: number | null;
  /** half-open: the process (its consumer name) that sends the probe. */
  prober: string | null;
}

export const CLOSED: Circuit = {
  state: "closed",
  timeouts: 0,
  opens: 0,
  openedAt: null,
  until: null,
  prober: null,
};

export interface CircuitPolicy {
  /** Time-outs in a row that open the circuit (WEBHOOK_CIRCUIT_TIMEOUTS). */
  timeouts: number;
  /** Its cool-down: the first one, and the most it grows to. */
  backoff: Backoff;
}

/** What an attempt's outcome does to the circuit (`timedOut`: no answer within the time limit). */
export function afterAttempt(
  circuit: Circuit,
  timedOut: boolean,
  now: number,
  policy: CircuitPolicy,
  random: number = Math.random(),
): Circuit {
  if (!timedOut) return CLOSED;
  const timeouts = circuit.timeouts + 1;
  const opens = circuit.state === "half-open" || (circuit.state === "closed" && timeouts >= policy.timeouts);
  if (!opens) return { ...circuit, timeouts };
  const count = circuit.opens + 1;
  return {
    state: "open",
    timeouts,
    opens: count,
    openedAt: now,
    until: now + retryDelayMs(policy.backoff, count, random),
    prober: null,
  };
}

/** What this process may do now: send as usual, send one probe (it holds the probe), or wait. */
export function sendingNow(circuit: Circuit, self: string, now: number): "send" | "probe" | "wait" {
  if (circuit.state === "closed") return "send";
  if (circuit.state === "half-open" && circuit.prober === self && (circuit.until ?? 0) > now) return "probe";
  return "wait";
}

/** Whether a process may take the probe now: the cool-down is over, or the last prober's hold ran out. */
export function probeFree(circuit: Circuit, now: number): boolean {
  return circuit.state !== "closed" && (circuit.until ?? 0) <= now;
}

/** The circuit with its probe held by `self` for `holdMs`. */
export function probing(circuit: Circuit, self: string, now: number, holdMs: number): Circuit {
  return { ...circuit, state: "half-open", until: now + holdMs, prober: self };
}

/** The stored form ("" for a closed circuit, which is not stored). */
export function circuitText(circuit: Circuit): string {
  return circuit.state === "closed" && circuit.timeouts === 0 ? "" : JSON.stringify(circuit);
}

/** A stored circuit: a field it lacks (stored by an earlier release) is the closed circuit's. */
const circuitRecord = z.looseObject({
  state: z.enum(["closed", "open", "half-open"]).optional(),
  timeouts: z.number().optional(),
  opens: z.number().optional(),
  openedAt: z.number().nullable().optional(),
  until: z.number().nullable().optional(),
  prober: z.string().nullable().optional(),
});

/** The circuit stored as `text` ("" for a closed one). */
export function parseCircuit(text: string): Circuit {
  return text === "" ? CLOSED : { ...CLOSED, ...readStoredJson(circuitRecord, "webhook circuit", text) };
}
