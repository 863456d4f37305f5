/**
 * The MongoDB side of the tenant data, inside store/: one database per account
 * (so accounts never share a collection), its handles cached, every command's
 * time limit, sessions and whether transactions exist. The port's adapter
 * (tenant-store.ts), the guarded writes, the unit of work and the index store
 * work through it; nothing outside store/ sees it.
 */
import type { LRUCache } from "lru-cache";
import type { ClientSession, Collection, Db, MongoClient } from "mongodb";
import { perAccountCache } from "../../../../shared/cache/per-account-cache.ts";
import type { TenantStorage } from "./storage-names.ts";
import { collectionName } from "./storage-names.ts";
import type { RowDocument } from "./tenant-rows.ts";

/** What the driver's handle of one database holds (measured: about 400 bytes), with room to spare. */
const HANDLE_BYTES = 512;

/** What the driver's handle of one collection holds (its namespace, options and the database's handle, shared), with room to spare. */
const COLLECTION_HANDLE_BYTES = 1024;

/** The memory the handles of each kind may take: 16 MiB, about 20,000 accounts' databases. */
const HANDLES_BUDGET_BYTES = 16 * 1024 * 1024;

export class TenantDatabases {
  readonly #client: MongoClient;
  readonly queryTimeoutMs: number;
  #transactions: Promise<boolean> | undefined;
  /** Database handles by name, the most recently used ones (one per account) within a memory budget. */
  readonly #dbs: LRUCache<string, Db> = perAccountCache<Db>(HANDLES_BUDGET_BYTES, HANDLE_BYTES);
  /** Row collection handles by database and name, the most recently used ones within a memory budget (the driver resolves its options anew for each). */
  readonly #collections: LRUCache<string, Collection<RowDocument>> = perAccountCache<Collection<RowDocument>>(
    HANDLES_BUDGET_BYTES,
    COLLECTION_HANDLE_BYTES,
  );

  constructor(client: MongoClient, queryTimeoutMs: number) {
    this.#client = client;
    this.queryTimeoutMs = queryTimeoutMs;
  }

  /** A database handle by name (cached: the driver's `db()` showed in CPU profiles of the data path). */
  db(database: string): Db {
    let db = this.#dbs.get(database);
    if (!db) {
      db = this.#client.db(database);
      this.#dbs.set(database, db);
    }
    return db;
  }

  /** A collection of rows by database and name (cached). */
  collection(database: string, name: string): Collection<RowDocument> {
    const key = `${database}\u0000${name}`;
    let collection = this.#collections.get(key);
    if (!collection) {
      collection = this.db(database).collection<RowDocument>(name);
      this.#collections.set(key, collection);
    }
    return collection;
  }

  /** The collection of a project's table. */
  rows(storage: TenantStorage, table: string): Collection<RowDocument> {
    return this.collection(storage.database, collectionName(storage, table));
  }

  /** Multi-document transactions exist on replica sets and sharded clusters, not on standalone servers or FerretDB. */
  supportsTransactions(): Promise<boolean> {
    this.#transactions ??= (async () => {
      const hello = await this.#client.db("admin").command({ hello: 1 });
      return Boolean(hello.setName) || hello.msg === "isdbgrid";
    })().catch(() => false);
    return this.#transactions;
  }

  startSession(): ClientSession {
    return this.#client.startSession();
  }

  async ping(): Promise<void> {
    await this.#client.db("admin").command({ ping: 1 });
  }
}
