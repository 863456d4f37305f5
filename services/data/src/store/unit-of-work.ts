/**
 * Commits a planned set of row changes as one unit (guarded-writes.ts: every
 * write checks the row's checksum as read at planning time).
 *  - Replica set / sharded cluster: one MongoDB transaction.
 *  - Standalone server or FerretDB: under the request's row locks and write
 *    intent (row-locks.ts), the writes are applied in order; if one fails, the
 *    ones that may have applied are undone in reverse, retried while the store
 *    is away for up to the undo window. An undo that cannot finish leaves the
 *    intent to recovery (intent-recoverer.ts), and the answer is 503.
 * The write's change-feed events (change-feed.ts) are appended by the step that
 * completes it: the intent's release; with a transaction, they are recorded in
 * it (the feed outbox) and appended right after the commit (transaction-feed.ts).
 */
import type { ClientSession } from "mongodb";
import { ApiError, errors } from "../../../../shared/errors.ts";
import type { FeedBatch } from "./change-feed.ts";
import { applyWrite, type PlannedWrite, undoWrites } from "./guarded-writes.ts";
import { translateMongoError } from "./mongo-errors.ts";
import { backoffMs, type RetryPolicy, sleep } from "./retry-policy.ts";
import type { RowLockSession } from "./row-locks.ts";
import type { TenantDatabases } from "./tenant-databases.ts";
import { transactionFailure } from "./transaction-outcome.ts";

/** A write's change-feed events and how the transaction path keeps them (transaction-feed.ts). */
export interface CommitEvents {
  batch: FeedBatch;
  /** Before the transaction starts (outside it). */
  prepare: (batch: FeedBatch) => Promise<void>;
  /** Inside the transaction, after the writes: keeps the events with them. */
  record: (batch: FeedBatch, session: ClientSession) => Promise<void>;
  /** After the commit; never rejects (the write stands whatever happens then). */
  afterCommit: (batch: FeedBatch) => Promise<void>;
}

export async function commitWrites(
  store: TenantDatabases,
  database: string,
  writes: PlannedWrite[],
  locks: RowLockSession,
  policy: RetryPolicy,
  feed?: CommitEvents,
): Promise<void> {
  if (writes.length === 0) return;
  // A store-connection error leaves as 503/5031 (mongo-errors.ts).
  if (locks.withoutTransactions) return applyWithUndo(store, database, writes, locks, policy, feed?.batch);
  if (feed) await feed.prepare(feed.batch);
  const session = store.startSession();
  try {
    await session.withTransaction(async () => {
      for (const w of writes) await applyWrite(store, database, w, session);
      if (feed) await feed.record(feed.batch, session);
    });
  } catch (err) {
    const failure = transactionFailure(err);
    throw translateMongoError(failure) ?? failure;
  } finally {
    await session.endSession();
  }
  if (feed) await feed.afterCommit(feed.batch);
}

/** The writes that may have applied when write number `applied` (0-based) failed with `err`, newest first. */
export function writesToUndo(writes: PlannedWrite[], applied: number, err: unknown): PlannedWrite[] {
  // A refusal (conflict, duplicate key) means the failing write did not apply. A store failure may
  // have applied it with the answer lost, so it is undone too: every undo is idempotent.
  const storeFailed = !(err instanceof ApiError) || err.statusCode >= 500;
  return writes.slice(0, applied + (storeFailed ? 1 : 0)).reverse();
}

async function applyWithUndo(
  store: TenantDatabases,
  database: string,
  writes: PlannedWrite[],
  locks: RowLockSession,
  policy: RetryPolicy,
  feed: FeedBatch | undefined,
): Promise<void> {
  let applied = 0;
  locks.beginWrites();
  try {
    for (const w of writes) {
      locks.checkLease();
      await applyWrite(store, database, w);
      applied++;
    }
  } catch (err) {
    if (await undoWithinWindow(store, database, writesToUndo(writes, applied, err), locks, policy)) {
      locks.writesUndone();
      throw err;
    }
    await locks.leaveForRecovery();
    throw err instanceof ApiError && err.statusCode >= 500 ? err : errors.unavailable("A data store", err);
  }
  await locks.committed(writes, feed);
}

/** Undoes `writes` in order, retrying the failed ones until the window closes; true when all are undone. */
async function undoWithinWindow(
  store: TenantDatabases,
  database: string,
  writes: PlannedWrite[],
  locks: RowLockSession,
  policy: RetryPolicy,
): Promise<boolean> {
  const deadline = Date.now() + policy.undoWindowMs;
  let left = writes;
  for (let attempt = 1; ; attempt++) {
    left = await undoWrites(store, database, left, () => locks.mayWrite);
    if (left.length === 0) return true;
    if (Date.now() >= deadline || !locks.mayWrite) return false;
    await sleep(backoffMs(attempt));
  }
}
