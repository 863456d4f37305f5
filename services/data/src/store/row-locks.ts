/**
 * The one row-lock mechanism of the write path: the Redis row locks of a
 * request's write intent (write-intents.ts), with the in-process queue
 * (row-queue.ts) in front, so requests of one process wait for each other on a
 * promise rather than by polling Redis. With transactions (MongoDB replica
 * sets) the transaction is the unit and only the in-process queue is used.
 *
 * A session lives for one request. `hold` takes the rows of the current plan
 * and says whether the plan may be stale (another writer held a row, or the
 * plan needs rows it did not hold while planning), in which case the caller
 * plans again while keeping the locks. The unit of work then reports how its
 * writes ended: committed, undone, or left for recovery.
 */
import { errors } from "../../../../shared/errors.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { FeedBatch } from "./change-feed.ts";
import { ConflictError, type PlannedWrite, rowOf } from "./guarded-writes.ts";
import { Lease } from "./intent-lease.ts";
import { backoffMs, type RetryPolicy, sleep } from "./retry-policy.ts";
import type { RowQueue } from "./row-queue.ts";
import {
  newIntentId,
  type RowLockRequest,
  type RowRefusal,
  type RowReservation,
  rowChanges,
  type WriteIntents,
} from "./write-intents.ts";
import type { WriteReplication } from "./write-replication.ts";

export interface RowLocksDeps {
  queue: RowQueue;
  intents: WriteIntents;
  policy: RetryPolicy;
  logger: Logger;
  /** Called when a request leaves its intent for recovery. */
  onLeft?: () => void;
  /** Waits for a Redis replica to have the step that completed a write (write-replication.ts). */
  replicated?: WriteReplication;
  /** The rows a collection holds, from the store (seeds a row count nobody kept yet). */
  countRows: (database: string, collection: string) => Promise<number>;
}

/** A write would pass its row limit: refused whole, nothing taken. */
export class RowLimitRefusal extends Error {
  readonly collection: string;
  /** The rows the collection holds, with those that writes in flight reserved. */
  readonly rows: number;
  readonly limit: number;

  constructor(collection: string, rows: number, limit: number) {
    super(`row limit ${limit} of ${collection} reached (${rows} rows)`);
    this.name = "RowLimitRefusal";
    this.collection = collection;
    this.rows = rows;
    this.limit = limit;
  }
}

export class RowLocks {
  readonly #deps: RowLocksDeps;

  constructor(deps: RowLocksDeps) {
    this.#deps = deps;
  }

  /** A session for one request; `withoutTransactions`: the store has none, so writes take intents and Redis row locks. */
  open(database: string, withoutTransactions: boolean): RowLockSession {
    return new RowLockSession(this.#deps, database, withoutTransactions);
  }
}

/** Where a request's intent stands: none or nothing applied, writes in progress, done, or left to recovery. */
type IntentState = "clean" | "writing" | "done" | "left";

/** The lock requests of a plan's writes (one per row). */
export function lockRequests(
  locks: Pick<WriteIntents, "lockKey">,
  database: string,
  writes: PlannedWrite[],
): RowLockRequest[] {
  return writes.map((w) => ({
    key: locks.lockKey(database, w.collection, rowOf(w)._id),
    existed: w.kind !== "insert",
  }));
}

export class RowLockSession {
  /** The store has no transactions: writes take a write intent and Redis row locks, and are undone on failure. */
  readonly withoutTransactions: boolean;
  readonly #deps: RowLocksDeps;
  /** The tenant database the request writes (row lock keys name the row where it is stored). */
  readonly #database: string;
  readonly #id = newIntentId();
  #local = new Set<string>();
  #leaveQueue: () => void = () => {};
  /** Row lock keys this session's intent holds in Redis. */
  #held = new Set<string>();
  #lease: Lease | undefined;
  #state: IntentState = "clean";
  /** With transactions: rows reserved in the row counts, not yet settled. */
  #reserved = false;

  constructor(deps: RowLocksDeps, database: string, withoutTransactions: boolean) {
    this.#deps = deps;
    this.#database = database;
    this.withoutTransactions = withoutTransactions;
  }

  /**
   * Locks every row `writes` touch (on top of those already held) and, without transactions,
   * records the intent for `writes`. Resolves to true when the plan may be stale and should be
   * made again (the locks stay held). Throws 409 when other requests hold the rows for longer
   * than the lock wait, RowLimitRefusal when the writes would pass `rowLimit` (rows per
   * collection; null: none) in a collection.
   */
  async hold(writes: PlannedWrite[], plannedAt: number, rowLimit: number | null = null): Promise<boolean> {
    if (this.#state !== "clean") throw new Error("rows can only be locked before writing");
    const requests = lockRequests(this.#deps.intents, this.#database, writes);
    const rows: RowReservation = { limit: rowLimit, tables: rowChanges(writes) };
    // Rows a plan inserts get fresh generated keys on every plan: they take Redis locks (nobody
    // may build on an insert that could still be undone) but are no reason to plan again.
    let stale = await this.#queue(requests.filter((r) => r.existed).map((r) => r.key));
    if (!this.withoutTransactions) {
      await this.#reserveRows(rows);
      return stale;
    }
    if (requests.length === 0 && this.#held.size === 0) return stale;
    // A plan older than a delete tombstone lives could miss a delete made since its read.
    if (Date.now() - plannedAt > this.#deps.policy.tombstoneMs) stale = true;
    return (await this.#lockInRedis(writes, requests, rows)) || stale;
  }

  /** Seeds the row counts a script asked for, or throws the refusal. */
  async #seedOrRefuse(refusal: RowRefusal, limit: number | null): Promise<void> {
    if ("over" in refusal) {
      const { collection, rows } = refusal.over;
      throw new RowLimitRefusal(collection, rows, limit ?? 0);
    }
    for (const collection of refusal.seed) {
      const rows = await this.#deps.countRows(this.#database, collection);
      await this.#deps.intents.seedRows(this.#database, collection, rows);
    }
  }

  /** With transactions: reserves the plan's rows in the row counts (again, when it was planned again). */
  async #reserveRows(rows: RowReservation): Promise<void> {
    const { intents, policy } = this.#deps;
    if (Object.keys(rows.tables).length === 0 && !this.#reserved) return;
    for (;;) {
      const outcome = await intents.reserveRows(this.#database, this.#id, rows, policy.leaseMs);
      if (outcome === "taken") break;
      await this.#seedOrRefuse(outcome, rows.limit);
    }
    this.#reserved = true;
  }

  /** With transactions: the transaction committed; the rows it deleted leave the row counts. */
  async transactionCommitted(): Promise<void> {
    if (!this.#reserved) return;
    this.#reserved = false;
    await this.#deps.intents
      .settleRows(this.#database, this.#id, true)
      .catch((err: unknown) =>
        this.#deps.logger.warn(
          { error: err instanceof Error ? err.name : typeof err },
          "the row counts of a committed transaction were not settled; a recount corrects them",
        ),
      );
  }

  /** Waits in the in-process queue; true when another request of this process held a row or the set grew. */
  async #queue(keys: string[]): Promise<boolean> {
    const added = keys.filter((k) => !this.#local.has(k));
    if (added.length === 0) return false;
    // The Redis locks stay a subset of the queue's: never hold a row in Redis while queueing for more.
    if (this.#held.size > 0) await this.#release();
    const contended = this.#local.size > 0 || this.#deps.queue.isBusy(added);
    this.#leaveQueue();
    this.#local = new Set([...this.#local, ...keys]);
    this.#leaveQueue = await this.#deps.queue.enter(this.#local);
    return contended;
  }

  async #lockInRedis(
    writes: PlannedWrite[],
    requests: RowLockRequest[],
    rows: RowReservation,
  ): Promise<boolean> {
    const { intents, policy } = this.#deps;
    const wanted = new Map<string, RowLockRequest>(
      [...this.#held].map((key) => [key, { key, existed: false }]),
    );
    for (const r of requests) wanted.set(r.key, r);
    const locks = [...wanted.values()];
    const body = { database: this.#database, writes };
    const deadline = Date.now() + policy.lockWaitMs;
    let waited = false;
    for (let attempt = 1; ; attempt++) {
      const sentAt = Date.now();
      const outcome = await intents.acquire(this.#id, locks, body, policy.leaseMs, rows);
      if (typeof outcome === "object") {
        // Nothing was taken: seed the counts asked for (then try again at once), or refuse.
        await this.#seedOrRefuse(outcome, rows.limit);
        continue;
      }
      if (outcome !== "busy") {
        this.#held = new Set(wanted.keys());
        this.#startLease(sentAt);
        return waited || outcome === "stale";
      }
      waited = true;
      // Hold nothing while waiting, so two processes whose sets grew never wait for each other.
      if (this.#held.size > 0) await this.#release();
      if (Date.now() >= deadline)
        throw new ConflictError("The objects are being changed by other requests; try again");
      await sleep(backoffMs(attempt));
    }
  }

  #startLease(sentAt: number): void {
    if (!this.#lease) {
      const { intents, policy } = this.#deps;
      this.#lease = new Lease(policy.leaseMs, () =>
        intents.renew(this.#database, this.#id, this.#id, policy.leaseMs),
      );
      this.#lease.start();
    }
    this.#lease.granted(sentAt);
  }

  /** Releases the intent (nothing of it is applied) and its row locks. */
  async #release(): Promise<void> {
    const outcome = await this.#deps.intents.finish(
      this.#database,
      this.#id,
      this.#id,
      [...this.#held],
      new Set(),
      0,
    );
    // Claimed by a recoverer: the lease ran out while Redis could not be reached.
    if (outcome === "lost") throw errors.unavailable("The write lock store");
    this.#held.clear();
    this.#lease?.stop();
    this.#lease = undefined;
  }

  /** True while this request may still write under its locks (always, with transactions). */
  get mayWrite(): boolean {
    return !this.withoutTransactions || (this.#lease?.held ?? false);
  }

  /** Throws 503 when the locks may no longer be ours (the lease could not be renewed). */
  checkLease(): void {
    if (!this.mayWrite) throw errors.unavailable("The write lock store");
  }

  beginWrites(): void {
    this.#state = "writing";
  }

  /** Every applied write was undone: the request may plan again under the same locks. */
  writesUndone(): void {
    this.#state = "clean";
  }

  /**
   * All writes applied: releases the intent and the row locks and appends the write's events (one
   * call), leaving a tombstone for every deleted row. Throws 503 when that cannot be confirmed: the
   * intent then stays for recovery, which undoes the writes, so the error answer stays true.
   */
  async committed(writes: PlannedWrite[], feed?: FeedBatch): Promise<void> {
    const { intents, policy } = this.#deps;
    const database = this.#database;
    const deleted = new Set(
      writes
        .filter((w) => w.kind === "delete")
        .map((w) => intents.lockKey(database, w.collection, rowOf(w)._id)),
    );
    const finish = () =>
      intents.finish(database, this.#id, this.#id, [...this.#held], deleted, policy.tombstoneMs, feed, true);
    // A lost reply is asked again: "gone" then means the first call did it, as long as nobody
    // could have claimed the intent meanwhile (the lease is still ours).
    const outcome = await finish().catch(() => finish().catch((err: unknown) => err));
    if (outcome === "finished" || (outcome === "gone" && this.mayWrite)) {
      this.#state = "done";
      this.#held.clear();
      await this.#deps.replicated?.();
      return;
    }
    await this.leaveForRecovery();
    throw errors.unavailable("The write lock store", outcome instanceof Error ? outcome : undefined);
  }

  /** The writes could not be undone (or their success confirmed): the intent and its locks stay until a recoverer completes it. */
  async leaveForRecovery(): Promise<void> {
    this.#state = "left";
    this.#lease?.stop();
    this.#deps.onLeft?.();
    this.#deps.logger.warn(
      { intent: this.#id, database: this.#database, rows: this.#held.size },
      "a write could not be completed or undone; its intent is left for recovery",
    );
    await this.#deps.intents.handOver(this.#database, this.#id, this.#id).catch(() => {
      // Redis unreachable: the lease runs out by itself.
    });
  }

  /** Ends the request: releases what is still held unless the intent is left for recovery. */
  async close(): Promise<void> {
    try {
      if (this.#reserved) {
        this.#reserved = false;
        await this.#deps.intents.settleRows(this.#database, this.#id, false).catch(() => {
          // Redis unreachable: the reservation stays counted until a recount.
        });
      }
      if (this.#state === "writing") await this.leaveForRecovery();
      else if (this.#state === "clean" && this.#held.size > 0) {
        await this.#release().catch((err: unknown) =>
          this.#deps.logger.warn(
            { error: err instanceof Error ? err.name : typeof err, intent: this.#id },
            "row locks were not released; recovery releases them once their lease ran out",
          ),
        );
      }
    } finally {
      this.#lease?.stop();
      this.#leaveQueue();
    }
  }
}
