/**
 * When a failed delivery is tried again: the first retry `baseMs` after the
 * failure, each further one twice as long after the previous failure, never
 * more than `capMs`; with up to a quarter taken off at random, so that the
 * retries of many events that failed together do not arrive together again.
 */
export interface Backoff {
  baseMs: number;
  capMs: number;
}

/** The delay after the `attempts`-th failed attempt (1: the first). `random` in [0, 1). */
export function retryDelayMs(backoff: Backoff, attempts: number, random: number = Math.random()): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 40);
  const full = Math.min(backoff.capMs, backoff.baseMs * 2 ** exponent);
  return Math.round(full * (1 - random / 4));
}
