/**
 * The change feed of writes committed in MongoDB transactions (docs/realtime.md). Inside the
 * transaction the write's events go into the feed outbox of the write's database (feed-outbox.ts),
 * so they commit with the write or not at all. After the commit they are appended to the project's stream, marked appended
 * in the same Redis step (change-feed.ts, `appendOnce`), and — once a Redis replica has that step
 * (write-replication.ts) — removed from the outbox. Nothing after the commit is the request's
 * failure: the write stands, and events this step could not append or confirm stay in the outbox
 * for the sweeper (feed-outbox-sweeper.ts), which appends them unless the mark says they are there.
 */
import type { ClientSession } from "mongodb";
import type { ChangeFeed, FeedBatch } from "./change-feed.ts";
import type { FeedOutbox } from "./feed-outbox.ts";
import type { WriteReplication } from "./write-replication.ts";

export interface TransactionFeedDeps {
  feed: Pick<ChangeFeed, "appendOnce">;
  outbox: Pick<FeedOutbox, "register" | "record" | "remove">;
  /** Resolves to whether a Redis replica has what this process wrote (none configured: true). */
  replicated?: WriteReplication;
  /** Events left to the sweeper: Redis failed, or no replica confirmed them; `reason` for the log. */
  onDeferred: (events: number, reason: string) => void;
}

export class TransactionFeed {
  readonly #deps: TransactionFeedDeps;

  constructor(deps: TransactionFeedDeps) {
    this.#deps = deps;
  }

  /** Before the transaction: the sweeper is to look at the outbox of the write's database. */
  prepare(batch: FeedBatch): Promise<void> {
    return this.#deps.outbox.register(batch.database);
  }

  /** Inside the transaction: keeps the write's events with it. */
  record(batch: FeedBatch, session: ClientSession): Promise<void> {
    return this.#deps.outbox.record(batch, session);
  }

  /** After the commit: appends the events and clears them from the outbox. Never rejects. */
  async afterCommit(batch: FeedBatch): Promise<void> {
    if (batch.entries.length === 0) return;
    const { feed, outbox, replicated, onDeferred } = this.#deps;
    try {
      await feed.appendOnce(batch);
    } catch (err) {
      onDeferred(batch.entries.length, err instanceof Error ? err.name : typeof err);
      return;
    }
    // The answer waits for a replica to have the events; unconfirmed ones stay for the sweeper,
    // which appends them again if a failover lost them (with them went their mark).
    const confirmed = replicated ? await replicated().catch(() => false) : true;
    if (!confirmed) {
      onDeferred(batch.entries.length, "unreplicated");
      return;
    }
    // A record left behind by a failure here is harmless: the sweeper finds the mark and removes it.
    await outbox.remove(batch).catch(() => {});
  }
}
