/**
 * Durable write intents and the row locks they hold, in Redis. Without
 * transactions a request's writes are applied one by one, each guarded by a
 * checksum; the row lock is what makes check and write one step (FerretDB, for
 * one, applies an update's filter and its change separately). Before the first of
 * them, one Lua call locks every row the request writes and records an intent:
 * the tenant database and every planned write with the row before and after (and so
 * the checksums that guard the write and its undo). The same call on success
 * (or after a complete undo) releases the locks and deletes the intent. An
 * intent whose holder stopped renewing its lease (the undo could not finish,
 * the process died) keeps its rows locked until a recoverer claims it, undoes
 * its writes and releases it.
 *
 * Keys under the Redis prefix (shared/redis/key-layout.ts), all of one tenant
 * database in one hash slot (the tag `{<database>}`), so every script runs on
 * one Redis Cluster node:
 *  - `rowlock:{<database>}/<collection>/<row id>`: the id of the intent holding
 *    the row (no expiry: a lock is held exactly while its intent exists), or
 *    `~deleted` for a while after a committed delete of the row;
 *  - `intent:{<database>}:<id>`: hash of `owner` (who may work it), `body` (EJSON
 *    of the database and the writes), `keys` (the row locks it holds), `since`;
 *  - `intents:{<database>}`: sorted set of the database's intent ids by lease
 *    expiry (Redis time, ms);
 *  - `intent-databases`: sorted set of the databases whose writers recorded
 *    intents lately (Redis time of the last time one said so), where recovery
 *    looks, instead of scanning every node. A writer says so before its first
 *    intent in a database and again every `registerEveryMs`; recovery drops a
 *    database nobody named for `pruneAfterMs` whose index is empty, only if
 *    nobody named it meanwhile: a writer that records an intent named the
 *    database less than `registerEveryMs` before, so no database with an
 *    intent is ever dropped.
 */
import type { LRUCache } from "lru-cache";
import { BSON } from "mongodb";
import { z } from "zod";
import { perAccountCache } from "../../../../shared/cache/per-account-cache.ts";
import { type ApiError, errors } from "../../../../shared/errors.ts";
import { randomHex } from "../../../../shared/random-hex.ts";
import { type BatchCommand, batch, repliesOf } from "../../../../shared/redis/batch.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { pairsOf } from "../../../../shared/redis/flat-pairs.ts";
import {
  intentDatabasesKey,
  intentIndexKey,
  intentKeyPrefix,
  rowCountsKey,
  rowLockKey,
} from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";
import { issuesOf, readStoredJson } from "../../../../shared/stored-json.ts";
import { APPEND_FEED_LUA, appendArgs, type FeedBatch } from "./change-feed.ts";
import { ejsonText } from "./ejson-text.ts";
import type { PlannedWrite } from "./guarded-writes.ts";
import { storedRow } from "./stored-rows.ts";
import type { RowId } from "./tenant-store.ts";

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * Rows per collection (rowCountsKey): a write reserves the rows it inserts when it locks them and
 * gives back what it deleted when it commits (or what it reserved when it is undone), so the count
 * never falls below the rows stored, and a row limit checked here is never passed. The intent's
 * `rows` field says what it reserved: {collection: [inserts, deletes]}.
 */
const ROWS_LUA = `
local function give_back(counts, reserved, column)
  for coll, c in pairs(reserved) do
    local n = c[column]
    if n > 0 and redis.call('HEXISTS', counts, coll) == 1 then redis.call('HINCRBY', counts, coll, -n) end
  end
end
-- Checks and reserves ARGV[n] ({limit, tables}) for the intent; nil when done, else the refusal.
local function reserve_rows(counts, intent, n)
  local rows = cjson.decode(ARGV[n])
  local limit = tonumber(rows.limit)
  local prev = {}
  local text = redis.call('HGET', intent, 'rows')
  if text then prev = cjson.decode(text) end
  local missing = {}
  for coll, _ in pairs(rows.tables) do
    if redis.call('HEXISTS', counts, coll) == 0 then table.insert(missing, coll) end
  end
  if #missing > 0 then return {3, unpack(missing)} end
  if limit >= 0 then
    for coll, c in pairs(rows.tables) do
      local net = c[1] - c[2]
      if net > 0 then
        local held = 0
        if prev[coll] then held = prev[coll][1] end
        local current = tonumber(redis.call('HGET', counts, coll)) - held
        if current + net > limit then return {4, coll, current} end
      end
    end
  end
  give_back(counts, prev, 1)
  for coll, c in pairs(rows.tables) do
    if c[1] > 0 then redis.call('HINCRBY', counts, coll, c[1]) end
  end
  redis.call('HSET', intent, 'rows', cjson.encode(rows.tables))
  return nil
end
-- The intent ends: committed ('1') its deletes leave the count, undone its reservation does.
local function settle_rows(counts, intent, committed)
  local text = redis.call('HGET', intent, 'rows')
  if not text then return end
  if committed == '1' then give_back(counts, cjson.decode(text), 2) else give_back(counts, cjson.decode(text), 1) end
end`;

// KEYS: intents, intent, row counts, row locks…; ARGV: id, lease ms, body, keys (JSON), intent key
// prefix, rows to reserve (JSON), then per row lock '1' when the plan read the row as existing.
// Returns 0 (a row is held by another intent; nothing taken), 1 (taken), 2 (taken, but a row the
// plan read was deleted since), {3, collections…} (their row counts must be seeded first; nothing
// taken), {4, collection, rows} (the row limit would be passed; nothing taken).
const ACQUIRE = `${ROWS_LUA}
local id, stale = ARGV[1], 0
for i = 4, #KEYS do
  local holder = redis.call('GET', KEYS[i])
  if holder == '~deleted' then
    if ARGV[i + 3] == '1' then stale = 1 end
  elseif holder and holder ~= id then
    -- A lock whose intent is gone is stale; one with an expiry was taken by an older release.
    if redis.call('EXISTS', ARGV[5] .. holder) == 1 or redis.call('PTTL', KEYS[i]) > 0 then return 0 end
  end
end
local refused = reserve_rows(KEYS[3], KEYS[2], 6)
if refused then return refused end
for i = 4, #KEYS do redis.call('SET', KEYS[i], id) end
${NOW}
redis.call('HSET', KEYS[2], 'owner', id, 'body', ARGV[3], 'keys', ARGV[4])
redis.call('HSETNX', KEYS[2], 'since', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), id)
return 1 + stale`;

// With transactions (no intent, no row locks in Redis): KEYS: row counts, the reservation (an
// intent key nobody indexes); ARGV: lease ms, rows (JSON). Returns 1 or the refusal as ACQUIRE.
const RESERVE = `${ROWS_LUA}
local refused = reserve_rows(KEYS[1], KEYS[2], 2)
if refused then return refused end
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1`;

// KEYS: row counts, the reservation; ARGV: '1' committed, '0' not.
const SETTLE = `${ROWS_LUA}
settle_rows(KEYS[1], KEYS[2], ARGV[1])
redis.call('DEL', KEYS[2])
return 1`;

// KEYS: intents, intent, feed stream, row counts, row locks…; ARGV: id, owner, tombstone ms, '1'
// when the writes committed ('0': undone or never applied), then the feed's entries, max length and
// max age (change-feed.ts), then per row lock '1' to leave a delete tombstone. Appends the entries
// only when it finishes the intent. Returns 1 (finished), 2 (already gone), 0 (another owner works it).
const FINISH = `${APPEND_FEED_LUA}${ROWS_LUA}
local owner = redis.call('HGET', KEYS[2], 'owner')
if not owner then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 2
end
if owner ~= ARGV[2] then return 0 end
for i = 5, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    if ARGV[i + 3] == '1' then redis.call('SET', KEYS[i], '~deleted', 'PX', ARGV[3])
    else redis.call('DEL', KEYS[i]) end
  end
end
settle_rows(KEYS[4], KEYS[2], ARGV[4])
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[1])
append_feed(KEYS[3], 5)
return 1`;

// KEYS: intents, intent; ARGV: id, owner, lease ms ('' hands the intent over to recovery now).
const RENEW = `
if redis.call('HGET', KEYS[2], 'owner') ~= ARGV[2] then return 0 end
${NOW}
if ARGV[3] == '' then
  redis.call('HSET', KEYS[2], 'owner', '')
  redis.call('ZADD', KEYS[1], now, ARGV[1])
else
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
end
return 1`;

// KEYS: intents; ARGV: intent key prefix, new owner, lease ms. Claims the intent whose lease ran
// out first: {id, body, keys, since, now}, or the number of intents left (none claimable).
const CLAIM = `
${NOW}
for _ = 1, 100 do
  local id = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1)[1]
  if not id then return redis.call('ZCARD', KEYS[1]) end
  local fields = redis.call('HMGET', ARGV[1] .. id, 'body', 'keys', 'since')
  if fields[1] then
    redis.call('HSET', ARGV[1] .. id, 'owner', ARGV[2])
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), id)
    return {id, fields[1], fields[2], fields[3] or tostring(now), tostring(now)}
  end
  redis.call('ZREM', KEYS[1], id)
end
return redis.call('ZCARD', KEYS[1])`;

// KEYS: intent databases; ARGV: database.
const REGISTER = `
${NOW}
redis.call('ZADD', KEYS[1], now, ARGV[1])
return 1`;

// KEYS: intent databases; ARGV: database, the score it had when it was found idle.
const UNREGISTER = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0`;

export interface RegistryTiming {
  /** How often a writer names a database it writes to again (per process). */
  registerEveryMs: number;
  /** How long a database nobody named stays where recovery looks once its index is empty (well above registerEveryMs). */
  pruneAfterMs: number;
}

const REGISTRY_TIMING: RegistryTiming = { registerEveryMs: 60_000, pruneAfterMs: 600_000 };

/** The memory for when each database was last named: 8 MiB, about 25,000 databases. */
const REGISTERED_BYTES = 8 * 1024 * 1024;

/** One row lock a request asks for. */
export interface RowLockRequest {
  key: string;
  /** The plan read the row as existing (it updates or deletes it). */
  existed: boolean;
}

export interface IntentBody {
  database: string;
  writes: PlannedWrite[];
}

/** An intent a recoverer claimed. */
export interface ClaimedIntent extends IntentBody {
  id: string;
  owner: string;
  /** The row locks it holds. */
  keys: string[];
  /** How long ago it was first recorded. */
  ageMs: number;
}

/**
 * The rows a write adds to and removes from each collection (inserts, deletes), and the row limit
 * per collection (null: none; the counts are kept all the same).
 */
export interface RowReservation {
  limit: number | null;
  tables: Record<string, [inserts: number, deletes: number]>;
}

/** Refusals of the row counts: collections whose count must be seeded first, or a limit passed. */
export type RowRefusal = { seed: string[] } | { over: { collection: string; rows: number } };

export type AcquireOutcome = "taken" | "busy" | "stale" | RowRefusal;

const NO_ROWS: RowReservation = { limit: null, tables: {} };

/** The rows `writes` insert and delete, per collection (updates change no count). */
export function rowChanges(writes: PlannedWrite[]): RowReservation["tables"] {
  const tables: RowReservation["tables"] = {};
  for (const w of writes) {
    if (w.kind === "update") continue;
    const counts = tables[w.collection] ?? [0, 0];
    counts[w.kind === "insert" ? 0 : 1]++;
    tables[w.collection] = counts;
  }
  return tables;
}

function encodeRows(rows: RowReservation): string {
  // cjson decodes an empty JSON object as a table that pairs() walks as empty, as wanted.
  return JSON.stringify({ limit: rows.limit ?? -1, tables: rows.tables });
}

/** A script's answer about row counts: a refusal, or undefined. */
function rowRefusal(r: unknown): RowRefusal | undefined {
  if (!Array.isArray(r)) return undefined;
  if (r[0] === 3) return { seed: r.slice(1).map(String) };
  return { over: { collection: String(r[1]), rows: Number(r[2]) } };
}
export type FinishOutcome = "finished" | "gone" | "lost";

/** A fresh id for an intent or for a claim (ids never start with `~`). */
export function newIntentId(): string {
  return randomHex(12);
}

/** The intent's body as stored: EJSON, so every BSON value of a row survives the trip. */
export function encodeIntent(body: IntentBody): string {
  return ejsonText(body);
}

/** A stored intent's body (EJSON, parsed): its database and its writes, each by collection. */
const storedIntentBody = z.looseObject({
  database: z.string(),
  writes: z.array(
    z.discriminatedUnion("kind", [
      z.looseObject({ kind: z.literal("insert"), collection: z.string(), after: storedRow }),
      z.looseObject({
        kind: z.literal("update"),
        collection: z.string(),
        before: storedRow,
        after: storedRow,
      }),
      z.looseObject({ kind: z.literal("delete"), collection: z.string(), before: storedRow }),
    ]),
  ),
});

/** The row locks a claimed intent holds, as stored (JSON text of their names). */
const storedLockKeys = z.array(z.string());

export function decodeIntent(text: string): IntentBody {
  const parsed = storedIntentBody.safeParse(BSON.EJSON.parse(text, { relaxed: true }));
  if (!parsed.success) throw new Error(`not a write intent: ${issuesOf(parsed.error)}`);
  return parsed.data;
}

/**
 * A failed script call as 503, without the client's error object: ioredis keeps the command's
 * arguments on it, and an intent's arguments carry rows, which must never reach a log line.
 */
function redisFailure(err: unknown): ApiError {
  const { name, message } = err instanceof Error ? err : { name: "Error", message: String(err) };
  return errors.unavailable("The write lock store", new Error(`${name}: ${message}`));
}

type ScriptName = "acquire" | "finish" | "renew" | "claim" | "register" | "unregister" | "reserve" | "settle";

export class WriteIntents {
  readonly #prefix: string;
  readonly #redis: RedisClient;
  readonly #scripts: Record<ScriptName, Script>;
  /**
   * When this process last named each database in the registry (its own clock), for the databases
   * written most recently within a memory budget: one forgotten is named again at its next write.
   */
  readonly #registered: LRUCache<string, { at: number }>;
  readonly #timing: RegistryTiming;

  /** `registeredBytes`: the memory for when each database was last named (tests make it small). */
  constructor(
    redis: RedisClient,
    prefix: string,
    timing: RegistryTiming = REGISTRY_TIMING,
    registeredBytes = REGISTERED_BYTES,
  ) {
    this.#registered = perAccountCache(registeredBytes);
    this.#prefix = prefix;
    this.#timing = timing;
    this.#redis = redis;
    const script = (name: ScriptName, lua: string): Script => {
      const call = defineScript(redis, `intent_${name}`, lua);
      return async (...args) => {
        try {
          return await call(...args);
        } catch (err) {
          throw redisFailure(err);
        }
      };
    };
    this.#scripts = {
      acquire: script("acquire", ACQUIRE),
      finish: script("finish", FINISH),
      renew: script("renew", RENEW),
      claim: script("claim", CLAIM),
      register: script("register", REGISTER),
      unregister: script("unregister", UNREGISTER),
      reserve: script("reserve", RESERVE),
      settle: script("settle", SETTLE),
    };
  }

  /** The lock key of one stored row. */
  lockKey(database: string, collection: string, id: RowId): string {
    return rowLockKey(this.#prefix, database, collection, JSON.stringify(id));
  }

  #intentKey(database: string, id: string): string {
    return intentKeyPrefix(this.#prefix, database) + id;
  }

  #index(database: string): string {
    return intentIndexKey(this.#prefix, database);
  }

  #rowCounts(database: string): string {
    return rowCountsKey(this.#prefix, database);
  }

  /** Sets the row count of a collection nobody counted yet (from the store's count); a count kept already stays. */
  async seedRows(database: string, collection: string, rows: number): Promise<void> {
    try {
      await this.#redis.hsetnx(this.#rowCounts(database), collection, String(rows));
    } catch (err) {
      throw redisFailure(err);
    }
  }

  /** Replaces the row counts of `database` (an operator's recount; writes in flight may be missed). */
  async resetRows(database: string, counts: Map<string, number>): Promise<void> {
    try {
      const key = this.#rowCounts(database);
      await this.#redis.del(key);
      if (counts.size > 0)
        await this.#redis.hset(key, Object.fromEntries([...counts].map(([c, n]) => [c, String(n)])));
    } catch (err) {
      throw redisFailure(err);
    }
  }

  /** The row counts of `database` kept here, by collection. */
  async rowCounts(database: string): Promise<Map<string, number>> {
    try {
      const all = await this.#redis.hgetall(this.#rowCounts(database));
      return new Map(Object.entries(all).map(([c, n]) => [c, Number(n)]));
    } catch (err) {
      throw redisFailure(err);
    }
  }

  /** Forgets the row counts of a database (its account is deleted). */
  async dropRows(database: string): Promise<void> {
    await this.#redis.del(this.#rowCounts(database));
  }

  /**
   * With transactions: checks and reserves the rows of a write under `id` (a key nobody recovers;
   * it expires after `leaseMs`, the count it reserved stays until a recount). "taken" or a refusal.
   */
  async reserveRows(
    database: string,
    id: string,
    rows: RowReservation,
    leaseMs: number,
  ): Promise<"taken" | RowRefusal> {
    const r = await this.#scripts.reserve(
      2,
      this.#rowCounts(database),
      this.#intentKey(database, `~rows:${id}`),
      leaseMs,
      encodeRows(rows),
    );
    return rowRefusal(r) ?? "taken";
  }

  /** With transactions: ends the reservation of `id`, committed or not. */
  async settleRows(database: string, id: string, committed: boolean): Promise<void> {
    await this.#scripts.settle(
      2,
      this.#rowCounts(database),
      this.#intentKey(database, `~rows:${id}`),
      committed ? "1" : "0",
    );
  }

  /** Names `database` where recovery looks, before an intent is recorded in it (again after a while). */
  async #register(database: string): Promise<void> {
    const last = this.#registered.get(database)?.at;
    const sentAt = performance.now();
    if (last !== undefined && sentAt - last < this.#timing.registerEveryMs) return;
    await this.#scripts.register(1, intentDatabasesKey(this.#prefix), database);
    this.#registered.set(database, { at: sentAt });
  }

  /** The databases where intents may be, with the Redis time they were last named. */
  async #databases(): Promise<[string, string][]> {
    let flat: string[];
    try {
      flat = await this.#redis.zrange(intentDatabasesKey(this.#prefix), 0, -1, "WITHSCORES");
    } catch (err) {
      throw redisFailure(err);
    }
    return pairsOf(flat);
  }

  /**
   * Records intent `id` for `body` and locks every row of `locks` for it, all or nothing (rows it
   * already holds stay held). "busy": another intent holds one of the rows, nothing changed.
   * Every lock must be a row of `body.database`.
   */
  async acquire(
    id: string,
    locks: RowLockRequest[],
    body: IntentBody,
    leaseMs: number,
    rows: RowReservation = NO_ROWS,
  ): Promise<AcquireOutcome> {
    const { database } = body;
    await this.#register(database);
    const keys = locks.map((l) => l.key);
    const r = await this.#scripts.acquire(
      3 + keys.length,
      this.#index(database),
      this.#intentKey(database, id),
      this.#rowCounts(database),
      ...keys,
      id,
      leaseMs,
      encodeIntent(body),
      JSON.stringify(keys),
      this.#intentKey(database, ""),
      encodeRows(rows),
      ...locks.map((l) => (l.existed ? "1" : "0")),
    );
    return rowRefusal(r) ?? (r === 0 ? "busy" : r === 2 ? "stale" : "taken");
  }

  /**
   * Releases intent `id` of `database` and its row locks if `owner` still works it; rows in
   * `deleted` keep a tombstone for `tombstoneMs`; the events of `feed` (a stream of `database`)
   * are appended in the same step, only when it finishes the intent. "gone": there was no such
   * intent (any more), and nothing was appended. `committed`: the writes stand (the rows they
   * deleted leave the row counts); otherwise they were undone or never applied (the rows they
   * reserved are given back).
   */
  async finish(
    database: string,
    id: string,
    owner: string,
    keys: string[],
    deleted: ReadonlySet<string>,
    tombstoneMs: number,
    feed?: FeedBatch,
    committed = false,
  ): Promise<FinishOutcome> {
    const intentKey = this.#intentKey(database, id);
    const r = await this.#scripts.finish(
      4 + keys.length,
      this.#index(database),
      intentKey,
      // Without events the script needs no stream: any key of the slot stands in.
      feed?.stream ?? intentKey,
      this.#rowCounts(database),
      ...keys,
      id,
      owner,
      tombstoneMs,
      committed ? "1" : "0",
      ...appendArgs(feed),
      ...keys.map((k) => (deleted.has(k) ? "1" : "0")),
    );
    return r === 1 ? "finished" : r === 2 ? "gone" : "lost";
  }

  /** Extends the lease of intent `id` if `owner` still works it. */
  async renew(database: string, id: string, owner: string, leaseMs: number): Promise<boolean> {
    return (
      (await this.#scripts.renew(
        2,
        this.#index(database),
        this.#intentKey(database, id),
        id,
        owner,
        leaseMs,
      )) === 1
    );
  }

  /** Gives intent `id` up for recovery at once (its rows stay locked until a recoverer releases them). */
  async handOver(database: string, id: string, owner: string): Promise<boolean> {
    return (
      (await this.#scripts.renew(2, this.#index(database), this.#intentKey(database, id), id, owner, "")) ===
      1
    );
  }

  /**
   * Claims an intent whose lease ran out (in each database the one that ran out first), for
   * `owner`, with a fresh lease; null when there is none.
   */
  async claim(owner: string, leaseMs: number): Promise<ClaimedIntent | null> {
    // A pass visits every database written in the last pruneAfterMs, which is every active tenant:
    // one clock reading and one batch of index counts for all of them, and a script only where an
    // intent waits (or the index may be empty).
    const databases = await this.#databases();
    if (databases.length === 0) return null;
    const now = await this.#now();
    // Only a database nobody named for pruneAfterMs may leave the registry: its count of intents is asked too.
    const idle = (namedAt: string) => Number(namedAt) < now - this.#timing.pruneAfterMs;
    const counted = await this.#indexCounts(
      databases.map(([database, namedAt]) => ({ database, namedAt, recorded: idle(namedAt) })),
      now,
    );
    for (const { database, namedAt, counts } of counted) {
      const { recorded, expired } = counts;
      let left = recorded;
      if (expired > 0) {
        const r = (await this.#scripts.claim(
          1,
          this.#index(database),
          this.#intentKey(database, ""),
          owner,
          leaseMs,
        )) as [string, string, string, string, string] | number;
        if (typeof r !== "number") return this.#claimed(owner, r);
        left = r;
      }
      if (left === 0) await this.#pruneIfIdle(database, namedAt, now);
    }
    return null;
  }

  /**
   * In one batch, each database's intents whose lease ran out by `now` (Redis's clock, ms) and,
   * where `recorded` is asked, all its intents (otherwise counted as unknown: NaN).
   */
  async #indexCounts<T extends { database: string; recorded: boolean }>(
    databases: T[],
    now: number,
  ): Promise<(T & { counts: { recorded: number; expired: number } })[]> {
    try {
      const groups = await batch(
        this.#redis,
        databases.map(({ database, recorded }): BatchCommand[] => [
          ["zcount", this.#index(database), "-inf", now],
          ...(recorded ? [["zcard", this.#index(database)] as BatchCommand] : []),
        ]),
      );
      // batch answers one group per database, in their order.
      return databases.map((item, i) => {
        const group = groups[i];
        if (!group) throw new Error("a batch answered fewer groups than it was given");
        const [expired, recorded] = repliesOf(group);
        const counts = {
          recorded: recorded === undefined ? Number.NaN : Number(recorded),
          expired: Number(expired),
        };
        return { ...item, counts };
      });
    } catch (err) {
      throw redisFailure(err);
    }
  }

  #claimed(
    owner: string,
    [id, body, keys, since, now]: [string, string, string, string, string],
  ): ClaimedIntent {
    try {
      return {
        id,
        owner,
        keys: readStoredJson(storedLockKeys, "write intent's row locks", keys),
        ageMs: Number(now) - Number(since),
        ...decodeIntent(body),
      };
    } catch {
      throw new Error(`write intent ${id} cannot be read`);
    }
  }

  /** Redis's clock, ms. */
  async #now(): Promise<number> {
    const [seconds, micros] = await this.#redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /** Drops a database with no intents from where recovery looks, once nobody named it for long (`now`: Redis's clock, ms). */
  async #pruneIfIdle(database: string, namedAt: string, now: number): Promise<void> {
    if (Number(namedAt) >= now - this.#timing.pruneAfterMs) return;
    await this.#scripts.unregister(1, intentDatabasesKey(this.#prefix), database, namedAt);
  }

  /** Intents recorded (in flight or waiting), and those among them whose lease ran out (waiting for recovery). */
  async count(): Promise<{ recorded: number; expired: number }> {
    const total = { recorded: 0, expired: 0 };
    const databases = await this.#databases();
    if (databases.length === 0) return total;
    for (const {
      counts: { recorded, expired },
    } of await this.#indexCounts(
      databases.map(([database]) => ({ database, recorded: true })),
      await this.#now(),
    )) {
      total.recorded += recorded;
      total.expired += expired;
    }
    return total;
  }
}
