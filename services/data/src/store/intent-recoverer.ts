/**
 * Completes abandoned write intents (write-intents.ts): those whose holder
 * stopped renewing the lease, because its undo could not finish while the store
 * was away or because its process died. Every data-service process runs one, at
 * start-up and then every interval. It claims one intent at a time with a lease
 * of its own (so two processes never work the same intent), undoes every write
 * of it newest first (each undo guarded by the checksum the write set, so
 * writes that never applied are left alone), and then releases the intent and
 * its row locks. An intent it cannot undo yet (the store is still away) is
 * handed back and tried again at a later run. It releases the intent without
 * change-feed events (change-feed.ts): an undone write has none.
 */
import type { Logger } from "../../../../shared/logger.ts";
import type { PlannedWrite } from "./guarded-writes.ts";
import { Lease } from "./intent-lease.ts";
import { PeriodicRun } from "./periodic-run.ts";
import { newIntentId, type WriteIntents } from "./write-intents.ts";

export interface IntentRecovererDeps {
  intents: Pick<WriteIntents, "claim" | "finish" | "renew" | "handOver">;
  /** Undoes writes in order while `mayWrite()`; resolves to those not undone. */
  undo: (database: string, writes: PlannedWrite[], mayWrite: () => boolean) => Promise<PlannedWrite[]>;
  leaseMs: number;
  intervalMs: number;
  logger: Logger;
  onRecovered?: () => void;
}

export class IntentRecoverer {
  readonly #deps: IntentRecovererDeps;
  readonly #periodic: PeriodicRun;

  constructor(deps: IntentRecovererDeps) {
    this.#deps = deps;
    this.#periodic = new PeriodicRun(
      () => this.runOnce(),
      deps.intervalMs,
      deps.logger,
      "write intent recovery failed; trying again later",
    );
  }

  /** Runs now, then every interval until `stop()`. */
  start(): void {
    this.#periodic.start();
  }

  /** Stops the periodic runs and waits for the current one. */
  stop(): Promise<void> {
    return this.#periodic.stop();
  }

  /** Works every intent whose lease ran out, each at most once; resolves to how many were completed. */
  async runOnce(): Promise<number> {
    const { intents, leaseMs, logger } = this.#deps;
    const tried = new Set<string>();
    let recovered = 0;
    while (!this.#periodic.stopped) {
      const owner = newIntentId();
      const claimedAt = Date.now();
      const intent = await intents.claim(owner, leaseMs);
      if (!intent) break;
      const lease = new Lease(leaseMs, () => intents.renew(intent.database, intent.id, owner, leaseMs));
      lease.granted(claimedAt);
      lease.start();
      try {
        if (tried.has(intent.id)) {
          // Handed back earlier in this run: the store is still away; the next run tries again.
          await intents.handOver(intent.database, intent.id, owner);
          break;
        }
        tried.add(intent.id);
        const left = await this.#deps.undo(intent.database, [...intent.writes].reverse(), () => lease.held);
        const context = { intent: intent.id, database: intent.database, writes: intent.writes.length };
        if (left.length > 0) {
          await intents.handOver(intent.database, intent.id, owner);
          logger.warn(
            { ...context, pending: left.length },
            "write intent not recovered yet (store unavailable)",
          );
          continue;
        }
        if (
          (await intents.finish(intent.database, intent.id, owner, intent.keys, new Set(), 0)) === "finished"
        ) {
          recovered++;
          this.#deps.onRecovered?.();
          logger.info({ ...context, ageMs: intent.ageMs }, "write intent recovered: its writes were undone");
        }
      } finally {
        lease.stop();
      }
    }
    return recovered;
  }
}
