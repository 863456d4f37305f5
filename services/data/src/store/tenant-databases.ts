/**
 * The MongoDB side of the tenant data, inside store/: one database per account
 * (so accounts never share a collection), its handles cached, every command's
 * time limit, sessions and whether transactions exist. The port's adapter
 * (tenant-store.ts), the guarded writes, the unit of work and the index store
 * work through it; nothing outside store/ sees it.
 */
import { LRUCache } from "lru-cache";
import type { ClientSession, Collection, Db, MongoClient } from "mongodb";
import type { TenantStorage } from "./storage-names.ts";
import { collectionName } from "./storage-names.ts";
import type { RowDocument } from "./tenant-rows.ts";

export class TenantDatabases {
  readonly #client: MongoClient;
  readonly queryTimeoutMs: number;
  #transactions: Promise<boolean> | undefined;
  /** Database handles by name, the most recently used ones (one per account). */
  readonly #dbs = new LRUCache<string, Db>({ max: 10_000 });
  /** Row collection handles by database and name, the most recently used ones (the driver resolves its options anew for each). */
  readonly #collections = new LRUCache<string, Collection<RowDocument>>({ max: 10_000 });

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
