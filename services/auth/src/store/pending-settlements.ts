/**
 * Changes to Redis that must not be lost when Redis is briefly away (a restart, a
 * failover): each is sent at once; one that fails is kept and sent again, before
 * the next caller concerned with the same key goes on (`flush(key)`) and in the
 * background, until Redis takes it. Every change must be idempotent: one that
 * failed may have been applied anyway (only its answer was lost), and it is sent
 * again with `again` set.
 */

export interface Settlement {
  /** What the change is about (callers flush the changes of one key before going on). */
  key: string;
  send(again: boolean): Promise<unknown>;
}

/** How often kept changes are sent again in the background while any are kept. */
const RETRY_EVERY_MS = 250;

export class PendingSettlements {
  readonly #kept = new Set<Settlement>();
  readonly #retryEveryMs: number;
  #flushing: Promise<Map<Settlement, unknown>> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(retryEveryMs = RETRY_EVERY_MS) {
    this.#retryEveryMs = retryEveryMs;
  }

  /** How many changes are waiting for Redis. */
  get size(): number {
    return this.#kept.size;
  }

  /** Sends `settlement` now; when that fails it is kept. Never fails. */
  async settle(settlement: Settlement): Promise<void> {
    try {
      await settlement.send(false);
    } catch {
      this.keep(settlement);
    }
  }

  /** Keeps a change to send later (e.g. one whose first sending may have happened). */
  keep(settlement: Settlement): void {
    this.#kept.add(settlement);
    this.#timer ??= setInterval(() => void this.flush().catch(() => {}), this.#retryEveryMs).unref();
  }

  /**
   * Sends the kept changes (all of them; the caller waits for those of `key`, or for all, including
   * any kept meanwhile); callers arriving during a sending share it. Rejects when a change the caller
   * waits for still could not be sent (it stays kept).
   */
  async flush(key?: string): Promise<void> {
    const awaited = (s: Settlement) => key === undefined || s.key === key;
    while ([...this.#kept].some(awaited)) {
      this.#flushing ??= this.#sendKept().finally(() => {
        this.#flushing = undefined;
      });
      const failures = await this.#flushing;
      for (const [settlement, reason] of failures) if (awaited(settlement)) throw reason;
    }
  }

  /** Sends every kept change once; answers those that failed (still kept) with their errors. */
  async #sendKept(): Promise<Map<Settlement, unknown>> {
    const batch = [...this.#kept];
    const outcomes = await Promise.all(
      batch.map((settlement) =>
        settlement.send(true).then(
          () => ({ settlement, sent: true as const }),
          (reason: unknown) => ({ settlement, sent: false as const, reason }),
        ),
      ),
    );
    const failures = new Map<Settlement, unknown>();
    for (const outcome of outcomes) {
      if (outcome.sent) this.#kept.delete(outcome.settlement);
      else failures.set(outcome.settlement, outcome.reason);
    }
    if (this.#kept.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    return failures;
  }
}
