/**
 * What the store says a tenant database holds, from its own statistics — never
 * by reading rows: `dbStats` for the database's data size, `listCollections`
 * and one `$collStats` (storageStats: count, size) per collection for rows and
 * bytes per table. MongoDB answers these from its catalog and WiredTiger's
 * metadata; the embedded FerretDB 1.24 answers them from SQLite's page counts
 * and a row count of each table. `countRows` seeds a collection's row count for
 * the write path (row-locks.ts), once per collection: the store's own count
 * (`count` without a filter: MongoDB answers it from its metadata, so a large
 * table costs no scan; FerretDB counts the table's rows).
 */
import { translateMongoError } from "./mongo-errors.ts";
import type { TenantDatabases } from "./tenant-databases.ts";

export interface CollectionStats {
  rows: number;
  bytes: number;
}

export interface DatabaseStats {
  /** The database's data size (`dbStats.dataSize`): rows as stored, without indexes. */
  bytes: number;
  collections: Map<string, CollectionStats>;
}

/** The store's own collections (not a project's tables, nor Tessera's outbox, which counts in the bytes). */
const INTERNAL = /^system\./;

export async function databaseStats(databases: TenantDatabases, database: string): Promise<DatabaseStats> {
  const db = databases.db(database);
  const maxTimeMS = databases.queryTimeoutMs;
  try {
    const stats = await db.command({ dbStats: 1, scale: 1 }, { maxTimeMS } as object);
    const names = await db.listCollections({}, { nameOnly: true }).toArray();
    const collections = new Map<string, CollectionStats>();
    for (const { name } of names) {
      if (INTERNAL.test(name)) continue;
      const [answer] = await db
        .collection(name)
        .aggregate([{ $collStats: { storageStats: {} } }], { maxTimeMS })
        .toArray();
      const storage = (answer?.storageStats ?? {}) as { count?: number; size?: number };
      collections.set(name, { rows: Number(storage.count ?? 0), bytes: Number(storage.size ?? 0) });
    }
    return { bytes: Number(stats.dataSize ?? 0), collections };
  } catch (err) {
    throw translateMongoError(err) ?? err;
  }
}

/**
 * The rows of a collection: `estimated` as the store keeps the number (`count` without a filter:
 * MongoDB answers from its metadata, FerretDB counts the table), once per collection to seed its
 * row count (row-locks.ts); `exact` counted (the operator's recount).
 */
export async function countRows(
  databases: TenantDatabases,
  database: string,
  collection: string,
  how: "estimated" | "exact" = "estimated",
): Promise<number> {
  const c = databases.db(database).collection(collection);
  const options = { maxTimeMS: databases.queryTimeoutMs };
  try {
    return how === "exact" ? await c.countDocuments({}, options) : await c.estimatedDocumentCount(options);
  } catch (err) {
    throw translateMongoError(err) ?? err;
  }
}
