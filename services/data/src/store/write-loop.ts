/**
 * The write path's loop: plan → lock → (plan again if the plan may be stale)
 * → commit, and plan again after a write conflict. A request's plan is made
 * without locks; locking its rows tells whether another writer was at them
 * (then the request plans again on top of that writer's result, keeping the
 * locks), and the commit's checksum guards catch what the locks could not (a
 * writer without locks, another process on a replica set). A row the client
 * addressed with a checksum that changed meanwhile fails at planning (409).
 * docs/architecture.md shows where it sits in a write.
 */
import { errors } from "../../../../shared/errors.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { ChangeFeed } from "./change-feed.ts";
import { ConflictError, type PlannedWrite } from "./guarded-writes.ts";
import { DuplicateKeyError } from "./mongo-errors.ts";
import { backoffMs, type RetryPolicy, sleep } from "./retry-policy.ts";
import { RowLimitRefusal, type RowLocks } from "./row-locks.ts";
import { collectionName, type TenantStorage } from "./storage-names.ts";
import type { TenantDatabases } from "./tenant-databases.ts";
import type { Planned, RowWrite, WriteLoop, WriteQuota } from "./tenant-rows.ts";
import type { TransactionFeed } from "./transaction-feed.ts";
import { type CommitEvents, commitWrites } from "./unit-of-work.ts";

export interface WriteLoopDeps {
  store: TenantDatabases;
  locks: RowLocks;
  policy: RetryPolicy;
  logger: Logger;
  /**
   * The change feed and how writes committed in transactions keep their events; none when it is
   * switched off (FEED_ENABLED=false).
   */
  feed?: { events: ChangeFeed; transactions: TransactionFeed };
}

/** A plan's row writes as the store writes them (by collection). */
function toPlannedWrites(storage: TenantStorage, writes: RowWrite[]): PlannedWrite[] {
  return writes.map(({ table, ...write }) => ({ ...write, collection: collectionName(storage, table) }));
}

/** The plan's answer to an insert the store refused for its key, when the plan has one. */
function duplicateOf<T>(planned: Planned<T>, storage: TenantStorage, err: DuplicateKeyError): Error {
  const write = planned.writes.find(
    (w): w is RowWrite & { kind: "insert" } =>
      w.kind === "insert" && w.after._id === err.id && collectionName(storage, w.table) === err.collection,
  );
  return write && planned.duplicate ? planned.duplicate(write) : err;
}

/** The storage quota: over it, a plan that writes anything but deletes is refused whole. */
function checkStorage(quota: WriteQuota | undefined, writes: RowWrite[]): void {
  const full = quota?.storageFull;
  if (!full || writes.every((w) => w.kind === "delete")) return;
  throw errors.quotaExceeded({
    limit: "storedBytes",
    value: full.limit,
    used: full.used,
    plan: quota.plan,
    what: "bytes of stored data",
  });
}

/** A row limit the counts refused, in the client's terms (the table, not its collection). */
function rowLimitError(
  storage: TenantStorage,
  quota: WriteQuota | undefined,
  refusal: RowLimitRefusal,
): Error {
  const table = refusal.collection.startsWith(storage.collectionPrefix)
    ? refusal.collection.slice(storage.collectionPrefix.length)
    : refusal.collection;
  return errors.quotaExceeded({
    limit: "rowsPerTable",
    value: refusal.limit,
    used: refusal.rows,
    plan: quota?.plan ?? "",
    what: `rows in table '${table}'`,
  });
}

export function createWriteLoop(deps: WriteLoopDeps): WriteLoop {
  const { store, locks, policy, logger, feed } = deps;
  return {
    async run(storage, plan, quota) {
      const withoutTransactions = !(await store.supportsTransactions());
      const session = locks.open(storage.database, withoutTransactions);
      try {
        for (let attempt = 1; ; attempt++) {
          const plannedAt = Date.now();
          const planned = await plan();
          checkStorage(quota, planned.writes);
          const writes = toPlannedWrites(storage, planned.writes);
          const stale = await session
            .hold(writes, plannedAt, quota?.rowsPerTable ?? null)
            .catch((err: unknown) => {
              throw err instanceof RowLimitRefusal ? rowLimitError(storage, quota, err) : err;
            });
          if (stale && attempt < policy.maxPlans) continue;
          try {
            const events: CommitEvents | undefined = feed && {
              batch: feed.events.batch(storage, planned.writes, planned.rulesOf),
              prepare: (batch) => feed.transactions.prepare(batch),
              record: (batch, session) => feed.transactions.record(batch, session),
              afterCommit: (batch) => feed.transactions.afterCommit(batch),
            };
            await commitWrites(store, storage.database, writes, session, policy, events);
            if (!withoutTransactions) await session.transactionCommitted();
          } catch (err) {
            // The unit of work has undone what it applied; the locks are still held.
            if (err instanceof DuplicateKeyError) throw duplicateOf(planned, storage, err);
            if (!(err instanceof ConflictError) || attempt >= policy.maxPlans) throw err;
            logger.debug({ attempt }, "write conflict; planning the request again");
            await sleep(backoffMs(attempt));
            continue;
          }
          return { value: planned.value, attempts: attempt };
        }
      } finally {
        await session.close();
      }
    },
  };
}
