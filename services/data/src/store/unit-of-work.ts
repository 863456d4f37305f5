/**
 * Commits a planned set of row changes as one unit. Every write is guarded by
 * the row's checksum as read at planning time, so a concurrent change makes the
 * write match nothing (409) instead of being overwritten.
 *  - Replica set / sharded cluster: one MongoDB transaction.
 *  - Standalone server or FerretDB: writes applied in order; if one fails, the
 *    ones already applied are undone (each undo guarded by the checksum it wrote).
 */
import type { ClientSession } from "mongodb";
import { ApiError, ErrorCode, errors } from "../../../../shared/errors.ts";
import type { Logger } from "../../../../shared/logger.ts";
import { type RowDocument, RowsBusyError, type TenantStore } from "./tenant-store.ts";

export type PlannedWrite =
  | { kind: "insert"; collection: string; after: RowDocument }
  | { kind: "update"; collection: string; before: RowDocument; after: RowDocument }
  | { kind: "delete"; collection: string; before: RowDocument };

export class ConflictError extends ApiError {
  constructor(message = "The object was changed by another request; reload it and try again") {
    super(409, ErrorCode.conflict, message);
  }
}

export async function commitWrites(
  store: TenantStore,
  account: string,
  writes: PlannedWrite[],
  logger: Logger,
  hooks: { beforeWrite?: (index: number) => Promise<void> } = {},
): Promise<void> {
  if (writes.length === 0) return;
  // A store-connection error leaves as 503/5031 through the error middleware.
  if (!(await store.supportsTransactions())) return applyWithUndo(store, account, writes, logger, hooks);
  const session = store.startSession();
  try {
    await session.withTransaction(async () => {
      for (const [i, w] of writes.entries()) {
        await hooks.beforeWrite?.(i);
        await apply(store, account, w, session);
      }
    });
  } finally {
    await session.endSession();
  }
}

async function applyWithUndo(
  store: TenantStore,
  account: string,
  writes: PlannedWrite[],
  logger: Logger,
  hooks: { beforeWrite?: (index: number) => Promise<void> },
): Promise<void> {
  const applied: PlannedWrite[] = [];
  let release: () => Promise<void>;
  try {
    release = await store.lockRows(
      account,
      writes.map((w) => ({ collection: w.collection, id: rowOf(w)._id })),
    );
  } catch (err) {
    if (err instanceof RowsBusyError)
      throw new ConflictError("The objects are being changed by other requests; try again");
    throw err;
  }
  try {
    for (const [i, w] of writes.entries()) {
      await hooks.beforeWrite?.(i);
      await apply(store, account, w);
      applied.push(w);
    }
  } catch (err) {
    // A refusal (conflict, duplicate key) means the failing write did not apply. A store failure may
    // have applied it with the answer lost, so it is undone too: every undo is idempotent.
    const storeFailed = !(err instanceof ApiError) || err.statusCode >= 500;
    const started = writes.slice(0, applied.length + (storeFailed ? 1 : 0)).reverse();
    await undoAll(store, account, started, logger, storeFailed ? UNDO_RETRY_MS : 0);
    throw err;
  } finally {
    await release().catch((err) =>
      logger.warn({ err }, "row locks were not released; they expire by themselves"),
    );
  }
}

function rowOf(w: PlannedWrite): RowDocument {
  return w.kind === "delete" ? w.before : w.after;
}

async function apply(
  store: TenantStore,
  account: string,
  w: PlannedWrite,
  session?: ClientSession,
): Promise<void> {
  const c = store.db(account).collection<RowDocument>(w.collection);
  const opts = { session, maxTimeMS: store.queryTimeoutMs };
  if (w.kind === "insert") {
    try {
      await c.insertOne(w.after, { session });
    } catch (err) {
      if ((err as { code?: number }).code === 11000) {
        throw errors.badAttribute(
          `An object with this key already exists in '${w.collection.split(".").pop()}'`,
        );
      }
      throw err;
    }
  } else if (w.kind === "update") {
    const r = await c.replaceOne({ _id: w.before._id, _ck: w.before._ck }, w.after, opts);
    if (r.matchedCount !== 1) throw new ConflictError();
  } else {
    const r = await c.deleteOne({ _id: w.before._id, _ck: w.before._ck }, opts);
    if (r.deletedCount !== 1) throw new ConflictError();
  }
}

/** How long the undo of a request keeps trying while the store is unreachable. */
const UNDO_RETRY_MS = 15_000;

/**
 * Undoes writes in the given order. When the store fails, the failed undos are
 * tried again until `retryForMs` has passed, so a short outage leaves nothing behind.
 */
async function undoAll(
  store: TenantStore,
  account: string,
  writes: PlannedWrite[],
  logger: Logger,
  retryForMs: number,
): Promise<void> {
  const deadline = Date.now() + retryForMs;
  let left = writes;
  for (;;) {
    const failed = [];
    for (const w of left) {
      try {
        await undo(store, account, w);
      } catch {
        failed.push(w);
      }
    }
    if (failed.length === 0) return;
    if (Date.now() >= deadline) {
      // Without transactions this is the one window that cannot be closed; make it loud.
      logger.error(
        { collections: failed.map((w) => w.collection) },
        "a failed request could not be undone completely",
      );
      return;
    }
    left = failed;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Reverts one write where the row still holds what this request wrote (its checksum is
 * this request's own), so undoing a write that never applied, or twice, changes nothing.
 */
async function undo(store: TenantStore, account: string, w: PlannedWrite): Promise<void> {
  const c = store.db(account).collection<RowDocument>(w.collection);
  if (w.kind === "insert") await c.deleteOne({ _id: w.after._id, _ck: w.after._ck });
  else if (w.kind === "update") await c.replaceOne({ _id: w.after._id, _ck: w.after._ck }, w.before);
  else if (!(await c.findOne({ _id: w.before._id }))) {
    await c.insertOne(w.before).catch((err) => {
      if ((err as { code?: number }).code !== 11000) throw err;
    });
  }
}
