/**
 * Driver errors of MongoDB in the service's own terms. The port's adapter
 * (tenant-store.ts) and the unit of work (unit-of-work.ts) translate before an
 * error leaves store/, so the domain and the rules see only these; the error
 * middleware applies `translateMongoError` too, for the metadata stores
 * (mongoose) that answer route handlers directly.
 */
import { ApiError, ErrorCode, errors } from "../../../../shared/errors.ts";
import type { RowId } from "./tenant-rows.ts";

/** The store's code for a write that would give two rows the same unique key. */
const DUPLICATE_KEY = 11000;

export function isDuplicateKey(err: unknown): boolean {
  return (err as { code?: number } | null)?.code === DUPLICATE_KEY;
}

/**
 * An insert refused because a row with its key is stored already (400 4003). The
 * writer, which knows the resource and key the client wrote, answers it in those terms.
 */
export class DuplicateKeyError extends ApiError {
  readonly collection: string;
  readonly id: RowId;

  constructor(collection: string, id: RowId) {
    super(
      400,
      ErrorCode.badAttribute,
      `An object with this key already exists in '${collection.split(".").pop()}'`,
    );
    this.collection = collection;
    this.id = id;
  }
}

/**
 * A write refused because another row has the same values of a unique index's columns
 * (400 4003); nothing of the request is written.
 */
export class UniqueIndexError extends ApiError {
  constructor(collection: string, columns: string[] | undefined) {
    const table = collection.split(".").pop();
    super(
      400,
      ErrorCode.badAttribute,
      columns && columns.length > 0
        ? `Another row of '${table}' has the same values of (${columns.join(", ")}), which must be unique`
        : `Another row of '${table}' has the same values of the columns of one of its unique indexes`,
    );
  }
}

/**
 * The error of a duplicate the store refused on insert: the row's key (`_id`) or a unique index.
 * MongoDB names the index's key pattern; FerretDB does not, so whether the key is taken is asked.
 */
export async function insertDuplicateError(
  err: unknown,
  collection: string,
  id: RowId,
  keyTaken: () => Promise<boolean>,
): Promise<ApiError> {
  const pattern = (err as { keyPattern?: Record<string, unknown> } | null)?.keyPattern;
  const isKey = pattern ? Object.hasOwn(pattern, "_id") : await keyTaken();
  return isKey ? new DuplicateKeyError(collection, id) : new UniqueIndexError(collection, columnsOf(pattern));
}

/** The columns of a unique index an update collided on, when the store names them. */
export function columnsOf(pattern: Record<string, unknown> | undefined): string[] | undefined {
  return pattern ? Object.keys(pattern) : undefined;
}

/** Errors of the MongoDB driver (and mongoose) that mean "the store is not reachable right now". */
const UNREACHABLE =
  /^(Mongo(Network|NetworkTimeout|ServerSelection|NotConnected|Topology|PoolCleared)Error|MongooseServerSelectionError)$/;

/** The store's code for a command stopped at its `maxTimeMS`. */
const MAX_TIME_EXPIRED = 50;

/**
 * A MongoDB that is away → 503/5031; a query stopped at
 * its time limit → 503/5031 saying so (a write undoes what it applied before the
 * error reaches here); other errors are left alone.
 */
export function translateMongoError(err: unknown): ApiError | undefined {
  const name = (err as { name?: string } | null)?.name ?? "";
  const message = String((err as { message?: string } | null)?.message);
  const code = (err as { code?: unknown } | null)?.code;
  if (code === MAX_TIME_EXPIRED || (err as { codeName?: unknown } | null)?.codeName === "MaxTimeMSExpired")
    return errors.queryTimedOut(err);
  if (UNREACHABLE.test(name) || /buffering timed out/.test(message))
    return errors.unavailable("A data store", err);
  return undefined;
}
