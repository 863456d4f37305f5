/**
 * Tenant data: one MongoDB database per account (so accounts never share a
 * collection), one collection per project table. Every query carries a time
 * limit (maxTimeMS).
 *
 * Generated keys come from Redis (HINCRBY is atomic across every process; an
 * `$inc` is not on FerretDB), seeded from the table's highest value the first
 * time — so a new or emptied Redis never hands out a key that is already used.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { ClientSession, Collection, Db, Document, MongoClient } from "mongodb";

// KEYS[1] = the account's sequence hash; ARGV[1] = "<project>.<table>"; ARGV[2] = seed or "".
const NEXT_SEQUENCE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  if ARGV[2] == '' then return false end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)`;

// KEYS = row locks; ARGV[1] = token, ARGV[2] = ms. All or nothing.
const LOCK_ROWS = `
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'NX', 'PX', ARGV[2]) == false then
    for j = 1, i - 1 do redis.call('DEL', KEYS[j]) end
    return 0
  end
end
return 1`;

const UNLOCK_ROWS = `
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
return 1`;

/** A row's `_id`: its single key value, or the JSON text of a composite key's values. */
export type RowId = string | number | boolean;
export type RowDocument = Document & { _id: RowId; _ck: string };

/** Other requests kept the rows locked for longer than the query time limit. */
export class RowsBusyError extends Error {
  constructor() {
    super("rows are locked by other requests");
    this.name = "RowsBusyError";
  }
}

export class TenantStore {
  readonly #client: MongoClient;
  readonly #prefix: string;
  readonly queryTimeoutMs: number;
  #transactions: Promise<boolean> | undefined;
  readonly #names = new Map<string, string>();
  readonly #dbs = new Map<string, Db>();

  readonly #redis: Redis;
  readonly #redisPrefix: string;

  constructor(
    client: MongoClient,
    prefix: string,
    queryTimeoutMs: number,
    redis: Redis,
    redisPrefix: string,
  ) {
    this.#redis = redis;
    this.#redisPrefix = redisPrefix;
    this.#client = client;
    this.#prefix = prefix;
    this.queryTimeoutMs = queryTimeoutMs;
  }

  /** Database name for an account: readable, case-folded, with a hash so `Acme` and `acme` never collide. */
  databaseName(account: string): string {
    let name = this.#names.get(account);
    if (name === undefined) {
      const hash = createHash("sha256").update(account).digest("hex").slice(0, 8);
      const readable = account
        .toLowerCase()
        .replace(/[^a-z0-9_]/g, "_")
        .slice(0, 30);
      name = `${this.#prefix}${readable}_${hash}`;
      if (this.#names.size > 10_000) this.#names.clear();
      this.#names.set(account, name);
    }
    return name;
  }

  /** The account's database handle (cached: the driver's `db()` showed in CPU profiles of the data path). */
  db(account: string): Db {
    let db = this.#dbs.get(account);
    if (!db) {
      db = this.#client.db(this.databaseName(account));
      if (this.#dbs.size > 10_000) this.#dbs.clear();
      this.#dbs.set(account, db);
    }
    return db;
  }

  rows(account: string, project: string, table: string): Collection<RowDocument> {
    return this.db(account).collection<RowDocument>(`${project}.${table}`);
  }

  #sequenceKey(account: string): string {
    return `${this.#redisPrefix}seq:${this.databaseName(account)}`;
  }

  /** Next value of a table's generated `column` (gaps are possible after failed requests, as with SQL sequences). */
  async nextSequence(account: string, project: string, table: string, column: string): Promise<number> {
    const key = this.#sequenceKey(account);
    const field = `${project}.${table}`;
    const next = await this.#redis.eval(NEXT_SEQUENCE, 1, key, field, "");
    if (next !== null) return Number(next);
    const [highest] = await this.rows(account, project, table)
      .find(
        {},
        { sort: { [column]: -1 }, limit: 1, projection: { [column]: 1 }, maxTimeMS: this.queryTimeoutMs },
      )
      .toArray();
    const seed = typeof highest?.[column] === "number" ? Math.floor(highest[column] as number) : 0;
    return Number(await this.#redis.eval(NEXT_SEQUENCE, 1, key, field, String(seed)));
  }

  /** Drops every collection of a project (its tables and its sequences). */
  async dropProject(account: string, project: string): Promise<void> {
    const db = this.db(account);
    const collections = await db.listCollections({}, { nameOnly: true }).toArray();
    for (const c of collections) {
      if (c.name.startsWith(`${project}.`)) await db.dropCollection(c.name);
    }
    const fields = (await this.#redis.hkeys(this.#sequenceKey(account))).filter((f) =>
      f.startsWith(`${project}.`),
    );
    if (fields.length > 0) await this.#redis.hdel(this.#sequenceKey(account), ...fields);
  }

  async dropAccount(account: string): Promise<void> {
    await this.db(account).dropDatabase();
    await this.#redis.del(this.#sequenceKey(account));
  }

  /**
   * Without transactions, a checksum-guarded write is only atomic if no other
   * writer touches the row between check and write: FerretDB, for one, applies
   * an update's filter and its change in separate steps. Writers therefore hold
   * a short Redis lock on every row they write (all or nothing, sorted, with a
   * timeout), retrying briefly while another request holds one.
   */
  async lockRows(account: string, rows: { collection: string; id: RowId }[]): Promise<() => Promise<void>> {
    const db = this.databaseName(account);
    const keys = [
      ...new Set(
        rows.map((r) => `${this.#redisPrefix}rowlock:${db}/${r.collection}/${JSON.stringify(r.id)}`),
      ),
    ].sort();
    const token = createHash("sha256")
      .update(`${Math.random()}${process.hrtime.bigint()}`)
      .digest("hex")
      .slice(0, 24);
    const holdMs = Math.max(this.queryTimeoutMs * 2, 5000);
    const deadline = Date.now() + this.queryTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      if ((await this.#redis.eval(LOCK_ROWS, keys.length, ...keys, token, holdMs)) === 1) break;
      if (Date.now() > deadline) throw new RowsBusyError();
      await new Promise((r) => setTimeout(r, Math.min(2 + attempt * 2, 25) * (0.5 + Math.random())));
    }
    return async () => {
      await this.#redis.eval(UNLOCK_ROWS, keys.length, ...keys, token);
    };
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
