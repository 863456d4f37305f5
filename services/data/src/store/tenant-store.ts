/**
 * Tenant data: one MongoDB database per account (so accounts never share a
 * collection), one collection per project table, under the names recorded in
 * the metadata (storage-names.ts). Every query carries a time limit (maxTimeMS).
 *
 * Generated keys come from Redis (HINCRBY is atomic across every process; an
 * `$inc` is not on FerretDB), seeded from the table's highest value the first
 * time — so a new or emptied Redis never hands out a key that is already used.
 */
import { LRUCache } from "lru-cache";
import type { ClientSession, Collection, Db, MongoClient } from "mongodb";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { sequenceKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";
import { collectionName, type TenantStorage } from "./storage-names.ts";
import type { FindOptions, RowDocument, RowId, RowQuery, TenantRows } from "./tenant-rows.ts";

// KEYS[1] = the database's sequence hash; ARGV[1] = the table's collection name; ARGV[2] = seed or "".
const NEXT_SEQUENCE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  if ARGV[2] == '' then return false end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)`;

export type { RowDocument, RowId } from "./tenant-rows.ts";

export class TenantStore implements TenantRows {
  readonly #client: MongoClient;
  readonly queryTimeoutMs: number;
  #transactions: Promise<boolean> | undefined;
  /** Database handles by name, the most recently used ones (one per account). */
  readonly #dbs = new LRUCache<string, Db>({ max: 10_000 });

  readonly #redis: RedisClient;
  readonly #redisPrefix: string;
  readonly #nextSequence: Script;

  constructor(client: MongoClient, queryTimeoutMs: number, redis: RedisClient, redisPrefix: string) {
    this.#redis = redis;
    this.#nextSequence = defineScript(redis, "nextSequence", NEXT_SEQUENCE);
    this.#redisPrefix = redisPrefix;
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

  #rows(storage: TenantStorage, table: string): Collection<RowDocument> {
    return this.db(storage.database).collection<RowDocument>(collectionName(storage, table));
  }

  get(storage: TenantStorage, table: string, id: RowId): Promise<RowDocument | null> {
    return this.#rows(storage, table).findOne({ _id: id }, { maxTimeMS: this.queryTimeoutMs });
  }

  find(
    storage: TenantStorage,
    table: string,
    query: RowQuery,
    options: FindOptions = {},
  ): Promise<RowDocument[]> {
    return this.#rows(storage, table)
      .find(query, { ...options, maxTimeMS: this.queryTimeoutMs })
      .toArray();
  }

  async exists(storage: TenantStorage, table: string, query: RowQuery): Promise<boolean> {
    const found = await this.#rows(storage, table).findOne(query, {
      projection: { _id: 1 },
      maxTimeMS: this.queryTimeoutMs,
    });
    return found !== null;
  }

  #sequenceKey(database: string): string {
    return sequenceKey(this.#redisPrefix, database);
  }

  /** Next value of a table's generated `column` (gaps are possible after failed requests, as with SQL sequences). */
  async nextSequence(storage: TenantStorage, table: string, column: string): Promise<number> {
    const key = this.#sequenceKey(storage.database);
    const field = collectionName(storage, table);
    const next = await this.#nextSequence(1, key, field, "");
    if (next !== null) return Number(next);
    const [highest] = await this.#rows(storage, table)
      .find(
        {},
        { sort: { [column]: -1 }, limit: 1, projection: { [column]: 1 }, maxTimeMS: this.queryTimeoutMs },
      )
      .toArray();
    const seed = typeof highest?.[column] === "number" ? Math.floor(highest[column] as number) : 0;
    return Number(await this.#nextSequence(1, key, field, String(seed)));
  }

  /** Drops every collection of one project's storage (its tables) and its sequences. */
  async dropProjectStorage(storage: TenantStorage): Promise<void> {
    const db = this.db(storage.database);
    const collections = await db
      .listCollections({}, { nameOnly: true, maxTimeMS: this.queryTimeoutMs })
      .toArray();
    for (const c of collections) {
      if (c.name.startsWith(storage.collectionPrefix)) await db.dropCollection(c.name);
    }
    const key = this.#sequenceKey(storage.database);
    const fields = (await this.#redis.hkeys(key)).filter((f) => f.startsWith(storage.collectionPrefix));
    if (fields.length > 0) await this.#redis.hdel(key, ...fields);
  }

  /** Drops an account's database (every project's tables) and its sequences. */
  async dropAccountStorage(database: string): Promise<void> {
    await this.db(database).dropDatabase();
    await this.#redis.del(this.#sequenceKey(database));
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
