/**
 * The port's adapter for MongoDB (tenant-rows.ts): reads of a project's
 * tables under the names recorded in the metadata (storage-names.ts), each
 * RowFilter compiled to its query document (mongo-filter.ts), every query with
 * a time limit (maxTimeMS), and driver errors turned into the project's own
 * (mongo-errors.ts) before they leave. Also drops deleted projects' and
 * accounts' storage (storage-sweeper.ts).
 *
 * Generated keys come from Redis (HINCRBY is atomic across every process; an
 * `$inc` is not on FerretDB), seeded from the table's highest value the first
 * time — so a new or emptied Redis never hands out a key that is already used.
 */
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { feedStreamKey, sequenceKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";
import { translateMongoError } from "./mongo-errors.ts";
import { toMongoFilter } from "./mongo-filter.ts";
import { collectionName, type TenantStorage } from "./storage-names.ts";
import type { TenantDatabases } from "./tenant-databases.ts";
import type { FindOptions, RowDocument, RowFilter, RowId, TenantRows } from "./tenant-rows.ts";

// KEYS[1] = the database's sequence hash; ARGV[1] = the table's collection name; ARGV[2] = seed or "".
const NEXT_SEQUENCE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  if ARGV[2] == '' then return false end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)`;

export type { RowDocument, RowId } from "./tenant-rows.ts";

/** Rethrows a driver error the project answers in its own terms (a store away, a query past its time) as that. */
function translated(err: unknown): never {
  throw translateMongoError(err) ?? err;
}

export class TenantStore implements TenantRows {
  readonly #databases: TenantDatabases;
  readonly #redis: RedisClient;
  readonly #redisPrefix: string;
  readonly #nextSequence: Script;

  constructor(databases: TenantDatabases, redis: RedisClient, redisPrefix: string) {
    this.#databases = databases;
    this.#redis = redis;
    this.#nextSequence = defineScript(redis, "nextSequence", NEXT_SEQUENCE);
    this.#redisPrefix = redisPrefix;
  }

  get #timeLimit(): { maxTimeMS: number } {
    return { maxTimeMS: this.#databases.queryTimeoutMs };
  }

  get(storage: TenantStorage, table: string, id: RowId): Promise<RowDocument | null> {
    return this.#databases.rows(storage, table).findOne({ _id: id }, this.#timeLimit).catch(translated);
  }

  find(
    storage: TenantStorage,
    table: string,
    filter: RowFilter,
    options: FindOptions = {},
  ): Promise<RowDocument[]> {
    return this.#databases
      .rows(storage, table)
      .find(toMongoFilter(filter), { ...options, ...this.#timeLimit })
      .toArray()
      .catch(translated);
  }

  async exists(storage: TenantStorage, table: string, filter: RowFilter): Promise<boolean> {
    const found = await this.#databases
      .rows(storage, table)
      .findOne(toMongoFilter(filter), { projection: { _id: 1 }, ...this.#timeLimit })
      .catch(translated);
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
    const [highest] = await this.#databases
      .rows(storage, table)
      .find({}, { sort: { [column]: -1 }, limit: 1, projection: { [column]: 1 }, ...this.#timeLimit })
      .toArray()
      .catch(translated);
    const seed = typeof highest?.[column] === "number" ? Math.floor(highest[column] as number) : 0;
    return Number(await this.#nextSequence(1, key, field, String(seed)));
  }

  /** Drops every collection of one project's storage (its tables), its sequences and its change feed. */
  async dropProjectStorage(storage: TenantStorage): Promise<void> {
    const db = this.#databases.db(storage.database);
    const collections = await db.listCollections({}, { nameOnly: true, ...this.#timeLimit }).toArray();
    for (const c of collections) {
      if (c.name.startsWith(storage.collectionPrefix)) await db.dropCollection(c.name);
    }
    const key = this.#sequenceKey(storage.database);
    const fields = (await this.#redis.hkeys(key)).filter((f) => f.startsWith(storage.collectionPrefix));
    if (fields.length > 0) await this.#redis.hdel(key, ...fields);
    await this.#redis.del(feedStreamKey(this.#redisPrefix, storage.database, storage.collectionPrefix));
  }

  /**
   * Drops an account's database (every project's tables and the feed outbox), its sequences and
   * the change feeds of its projects (`collectionPrefixes`: those known).
   */
  async dropAccountStorage(database: string, collectionPrefixes: string[]): Promise<void> {
    await this.#databases.db(database).dropDatabase();
    await this.#redis.del(this.#sequenceKey(database));
    // The feeds share a hash slot ({database}): one command on a Redis Cluster too.
    const feeds = collectionPrefixes.map((p) => feedStreamKey(this.#redisPrefix, database, p));
    if (feeds.length > 0) await this.#redis.del(...feeds);
  }
}
