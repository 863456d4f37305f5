/**
 * Appends the change-feed events that writes committed in MongoDB transactions left in the feed
 * outbox (feed-outbox.ts): those whose writer could not append them (Redis away right after the
 * commit), could not confirm them on a Redis replica, or died before either. It is the transaction
 * path's recovery, as intent recovery is the other path's: every data-service process with a
 * transactional store runs one at start-up and every WRITE_RECOVERY_INTERVAL_MS.
 *
 * It looks only at records older than one interval (younger ones are their writer's), appends each
 * write's events with `appendOnce` — so events already appended (by the writer, or by another
 * process's sweeper at the same moment) are not appended again — and removes the records once a
 * Redis replica has the step. Events it appends arrive after events of later writes: the feed
 * then holds them out of commit order (each carries its transaction id).
 */
import type { Logger } from "../../../../shared/logger.ts";
import type { ChangeFeed } from "./change-feed.ts";
import type { FeedOutbox } from "./feed-outbox.ts";
import { PeriodicRun } from "./periodic-run.ts";
import type { WriteReplication } from "./write-replication.ts";

export interface OutboxSweeperDeps {
  feed: Pick<ChangeFeed, "appendOnce">;
  outbox: Pick<FeedOutbox, "databases" | "pending" | "remove" | "forgetIfIdle">;
  replicated?: WriteReplication;
  intervalMs: number;
  logger: Logger;
  /** Events this sweeper appended (they were missing from the stream). */
  onAppended?: (events: number) => void;
  /** Writes looked at per query (per database). */
  batchSize?: number;
  now?: () => number;
}

export class OutboxSweeper {
  readonly #deps: OutboxSweeperDeps;
  readonly #periodic: PeriodicRun;

  constructor(deps: OutboxSweeperDeps) {
    this.#deps = deps;
    this.#periodic = new PeriodicRun(
      () => this.runOnce(),
      deps.intervalMs,
      deps.logger,
      "feed outbox sweep failed; trying again later",
    );
  }

  /** Runs now, then every interval until `stop()`. */
  start(): void {
    this.#periodic.start();
  }

  stop(): Promise<void> {
    return this.#periodic.stop();
  }

  /**
   * Works every write recorded before one interval ago, each at most once per run; resolves to how
   * many events this run appended (not counting those that were in the stream already).
   */
  async runOnce(): Promise<number> {
    const now = this.#deps.now ?? Date.now;
    const before = new Date(now() - this.#deps.intervalMs);
    let appended = 0;
    for (const { name, idle } of await this.#deps.outbox.databases()) {
      if (this.#periodic.stopped) break;
      const swept = await this.#sweep(name, before);
      appended += swept.appended;
      // One named lately stays whatever its outbox holds: no need to look.
      if (swept.writes === 0 && idle) await this.#deps.outbox.forgetIfIdle(name);
    }
    return appended;
  }

  /** One database's outbox: how many writes it held, and how many events this appended. */
  async #sweep(database: string, before: Date): Promise<{ writes: number; appended: number }> {
    const { feed, outbox, replicated, logger } = this.#deps;
    const done = new Set<string>();
    let appended = 0;
    while (!this.#periodic.stopped) {
      const pending = (await outbox.pending(database, before, this.#deps.batchSize ?? 100)).filter(
        (batch) => !done.has(batch.tx),
      );
      if (pending.length === 0) break;
      for (const batch of pending) {
        done.add(batch.tx);
        if (!(await feed.appendOnce(batch))) continue;
        appended += batch.entries.length;
        this.#deps.onAppended?.(batch.entries.length);
        logger.info(
          { database, tx: batch.tx, events: batch.entries.length },
          "feed outbox: a write's events appended",
        );
      }
      // Removed once a replica has them: otherwise the next run appends again what a failover lost.
      if (replicated && !(await replicated().catch(() => false))) break;
      for (const batch of pending) await outbox.remove(batch);
    }
    return { writes: done.size, appended };
  }
}
