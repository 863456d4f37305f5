/**
 * One row write of a plan, and its undo. Every write is guarded by the row's
 * checksum as read at planning time, so a concurrent change makes it match
 * nothing (409) instead of being overwritten; every undo is guarded by the
 * checksum the write itself set, so undoing a write that never applied, or
 * undoing it twice, changes nothing.
 */
import type { ClientSession } from "mongodb";
import { ApiError, ErrorCode } from "../../../../shared/errors.ts";
import { columnsOf, insertDuplicateError, isDuplicateKey, UniqueIndexError } from "./mongo-errors.ts";
import type { TenantDatabases } from "./tenant-databases.ts";
import type { RowDocument, RowWrite } from "./tenant-rows.ts";

/** A plan's row write (tenant-rows.ts) as the store commits it: by collection instead of table. */
type ByCollection<W> = W extends { table: string } ? Omit<W, "table"> & { collection: string } : never;
export type PlannedWrite = ByCollection<RowWrite>;

export class ConflictError extends ApiError {
  constructor(message = "The object was changed by another request; reload it and try again") {
    super(409, ErrorCode.conflict, message);
  }
}

/** The row a write addresses (its `_id` is the row's). */
export function rowOf(w: PlannedWrite): RowDocument {
  return w.kind === "delete" ? w.before : w.after;
}

export async function applyWrite(
  store: TenantDatabases,
  database: string,
  w: PlannedWrite,
  session?: ClientSession,
): Promise<void> {
  const c = store.collection(database, w.collection);
  const opts = { session, maxTimeMS: store.queryTimeoutMs };
  if (w.kind === "insert") {
    try {
      await c.insertOne(w.after, { session });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const keyTaken = async () =>
        (await c.findOne({ _id: w.after._id }, { ...opts, projection: { _id: 1 } })) !== null;
      throw await insertDuplicateError(err, w.collection, w.after._id, keyTaken);
    }
  } else if (w.kind === "update") {
    const r = await c.replaceOne({ _id: w.before._id, _ck: w.before._ck }, w.after, opts).catch((err) => {
      if (isDuplicateKey(err)) throw new UniqueIndexError(w.collection, columnsOf(err.keyPattern));
      throw err;
    });
    if (r.matchedCount !== 1) throw new ConflictError();
  } else {
    const r = await c.deleteOne({ _id: w.before._id, _ck: w.before._ck }, opts);
    if (r.deletedCount !== 1) throw new ConflictError();
  }
}

/**
 * Reverts one write where the row still holds what the write set (its checksum). A deleted row
 * is put back when it is absent: the row lock (and its delete tombstone) guarantees that nobody
 * else deleted it since the plan read it.
 */
export async function undoWrite(store: TenantDatabases, database: string, w: PlannedWrite): Promise<void> {
  const c = store.collection(database, w.collection);
  const opts = { maxTimeMS: store.queryTimeoutMs };
  if (w.kind === "insert") await c.deleteOne({ _id: w.after._id, _ck: w.after._ck }, opts);
  else if (w.kind === "update") await c.replaceOne({ _id: w.after._id, _ck: w.after._ck }, w.before, opts);
  else if (!(await c.findOne({ _id: w.before._id }, opts))) {
    await c.insertOne(w.before).catch((err) => {
      if (!isDuplicateKey(err)) throw err;
    });
  }
}

/**
 * Undoes `writes` in the given order while `mayWrite()` says the caller still owns them; returns
 * the writes whose undo failed or was not tried, in the same order.
 */
export async function undoWrites(
  store: TenantDatabases,
  database: string,
  writes: PlannedWrite[],
  mayWrite: () => boolean,
): Promise<PlannedWrite[]> {
  const failed: PlannedWrite[] = [];
  for (const w of writes) {
    if (!mayWrite()) {
      failed.push(w);
      continue;
    }
    try {
      await undoWrite(store, database, w);
    } catch {
      failed.push(w);
    }
  }
  return failed;
}
