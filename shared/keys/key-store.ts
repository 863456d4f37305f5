/**
 * Key records in Redis. Layout (prefix = REDIS_PREFIX; shared/redis/key-layout.ts):
 *   <prefix>key:{<sha256 of key>}         HASH { d: JSON KeyRecord (immutable part), s: status }
 *   <prefix>keyidx:{<account>/<project>}  HASH { <id>: <sha256 of key> }   (for admin listings)
 *   <prefix>keyexp:{<account>/<project>}  ZSET { <id> by when its record leaves Redis, ms; +inf: never }
 *   <prefix>keyact:{<account>/<project>}  ZSET { <id> by when it expires, ms; +inf: never }: the keys
 *                                         that count against the plan's apiKeysPerProject
 * Validation is a single HGETALL. Records live until expiry + retention (Redis TTL),
 * so revalidation and disable of an expired key answer as the contract says.
 * The index keeps a key exactly as long as its record (listings show expired keys while they are
 * on record, and project deletion finds them): every write and listing of the index first drops the
 * ids whose time has come (one script for both index keys, which share a hash tag), and the index
 * carries the TTL of its longest-lived entry, so a project nobody logs in to any more loses its
 * index with its last record. It grows with the logins of one lifetime plus retention, not forever.
 * An index written before the expiry order existed is scored at its first listing (its records say
 * when they go); until then it keeps no TTL.
 * A record and the index are in different hash slots (a Redis Cluster spreads records over its
 * nodes), so no command touches both: the index entry is written first and an entry whose record
 * is missing is dropped when listed.
 * The plan's `apiKeysPerProject` counts the project's keys that have not expired and are neither
 * disabled nor deleted: the third set, in the index's hash tag, so the script that indexes a new
 * key drops the expired ones, counts the rest and adds the new one in one step (concurrent logins
 * cannot pass the limit). Disable and delete take the key out of it. Keys minted by a release
 * before the count existed are not in it: they never count.
 * Account administrators' keys are in no index: nothing lists them, and they are
 * refused once their administrator or account is gone (shared/admin-access).
 * Revocations (disable, delete) wait for a replica's acknowledgement when the primary has
 * replicas; one not acknowledged in time still answers, and is reported (`onUnacknowledged`).
 *
 * Names before hash tags (`key:<hash>`, `keyidx:<account>/<project>`): outside Cluster mode
 * (`legacyNames`) a record or index entry not found under its name is looked for under the old
 * one, and revocations apply to both, so keys minted by an earlier release keep working (and stay
 * revocable) while it is rolled out; `renameLegacyKeys` moves them once (docs/operations.md §7a).
 */
import { type RedisClient, waitForReplica } from "../redis/clients.ts";
import {
  keyActiveKey,
  keyIndexExpiryKey,
  keyIndexKey,
  keyRecordKey,
  legacyKeyIndexKey,
  legacyKeyPatterns,
  legacyKeyRecordKey,
} from "../redis/key-layout.ts";
import { defineScript, type Script } from "../redis/scripts.ts";
import { readStoredJson } from "../stored-json.ts";
import { type KeyRecord, type KeyStatus, storedKeyFields } from "./key-record.ts";

// KEYS: record. ARGV: fixed part (JSON), status, ttl ms or ''. 0 when the record exists already.
const CREATE_SCRIPT = `
if redis.call('HSETNX', KEYS[1], 'd', ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 's', ARGV[2])
if ARGV[3] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1`;

const DISABLE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 's', 'disabled')
return 1`;

// Drops the index entries whose records are gone (score <= now; at most 1000 a call, so a call
// stays short: each write drops more than it adds), then gives both index keys the TTL of the
// longest-lived entry (none while one never expires, or while the index has entries not yet
// scored: written by an earlier release). KEYS: index hash, expiry zset.
const TRIM_INDEX = `
local function trim(index, expiry, now)
  local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', now, 'LIMIT', 0, 1000)
  if #gone > 0 then
    redis.call('HDEL', index, unpack(gone))
    redis.call('ZREM', expiry, unpack(gone))
  end
  local last = redis.call('ZRANGE', expiry, -1, -1, 'WITHSCORES')
  if #last == 0 or last[2] == 'inf' or redis.call('HLEN', index) ~= redis.call('ZCARD', expiry) then
    redis.call('PERSIST', index)
    redis.call('PERSIST', expiry)
  else
    local ttl = math.max(1, math.ceil(tonumber(last[2]) - now))
    redis.call('PEXPIRE', index, ttl)
    redis.call('PEXPIRE', expiry, ttl)
  end
end`;

// KEYS: index, expiry, active. ARGV: id, key hash, when the record leaves (ms, or '+inf'), now ms,
// when the key expires (ms, or '+inf'), the most active keys ('' for no limit).
// {1} added; {0, active keys} refused: the project has the most it may have (nothing written).
const INDEX_ADD_SCRIPT = `${TRIM_INDEX}
local now = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if ARGV[6] ~= '' then
  local active = redis.call('ZCARD', KEYS[3])
  if active >= tonumber(ARGV[6]) then return {0, active} end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
if last[2] == 'inf' then redis.call('PERSIST', KEYS[3])
else redis.call('PEXPIRE', KEYS[3], math.max(1, math.ceil(tonumber(last[2]) - now))) end
trim(KEYS[1], KEYS[2], now)
return {1}`;

// KEYS: index, expiry. ARGV: now ms.
const INDEX_TRIM_SCRIPT = `${TRIM_INDEX}
trim(KEYS[1], KEYS[2], tonumber(ARGV[1]))
return 1`;

// KEYS: index, expiry, active. ARGV: ids.
const INDEX_REMOVE_SCRIPT = `
redis.call('HDEL', KEYS[1], unpack(ARGV))
redis.call('ZREM', KEYS[2], unpack(ARGV))
redis.call('ZREM', KEYS[3], unpack(ARGV))
return 1`;

// KEYS: active. ARGV: now ms. How many keys of the project count (expired ones dropped first).
const ACTIVE_COUNT_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]))
return redis.call('ZCARD', KEYS[1])`;

/** The plan's most active keys of a project, and the error that refuses one more. */
export interface KeyCountLimit {
  most: number;
  refused(active: number): Error;
}

export interface KeyStoreOptions {
  /** Look records and index entries up under their names before hash tags too. */
  legacyNames?: boolean;
  /** Told when a revocation was not acknowledged by a replica in time (it may not survive a failover). */
  onUnacknowledged?: () => void;
}

export class KeyStore {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #retentionSeconds: number;
  readonly #createScript: Script;
  readonly #disableScript: Script;
  readonly #indexScripts: Record<"add" | "trim" | "remove" | "active", Script>;
  readonly #legacyNames: boolean;
  readonly #onUnacknowledged: () => void;

  constructor(redis: RedisClient, prefix: string, retentionSeconds: number, options: KeyStoreOptions = {}) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#retentionSeconds = retentionSeconds;
    this.#legacyNames = options.legacyNames ?? false;
    this.#onUnacknowledged = options.onUnacknowledged ?? (() => {});
    this.#createScript = defineScript(redis, "keyCreate", CREATE_SCRIPT);
    this.#disableScript = defineScript(redis, "keyDisable", DISABLE_SCRIPT);
    this.#indexScripts = {
      add: defineScript(redis, "keyIndexAdd", INDEX_ADD_SCRIPT),
      trim: defineScript(redis, "keyIndexTrim", INDEX_TRIM_SCRIPT),
      remove: defineScript(redis, "keyIndexRemove", INDEX_REMOVE_SCRIPT),
      active: defineScript(redis, "keyActiveCount", ACTIVE_COUNT_SCRIPT),
    };
  }

  #recordKey(hash: string): string {
    return keyRecordKey(this.#prefix, hash);
  }

  #indexKey(account: string, project: string): string {
    return keyIndexKey(this.#prefix, account, project);
  }

  /** The index and its expiry order (one hash tag: a script may touch both). */
  #indexPair(account: string, project: string): [string, string] {
    return [this.#indexKey(account, project), keyIndexExpiryKey(this.#prefix, account, project)];
  }

  /** The index, its expiry order and the active keys (one hash tag). */
  #indexTriple(account: string, project: string): [string, string, string] {
    return [...this.#indexPair(account, project), keyActiveKey(this.#prefix, account, project)];
  }

  /** When Redis forgets the record: expiry + retention (ms), or never. */
  #leavesAt(record: KeyRecord): number | "+inf" {
    return record.expiresAt === null ? "+inf" : record.expiresAt + this.#retentionSeconds * 1000;
  }

  /**
   * Stores a new record; false when a key with this hash already exists (nothing changed). Given
   * `limit`, throws its error when the project has `limit.most` active keys already (nothing stored).
   */
  async create(hash: string, record: KeyRecord, now: number, limit?: KeyCountLimit): Promise<boolean> {
    const { status, ...fixed } = record;
    const ttlMs = record.expiresAt === null ? null : record.expiresAt - now + this.#retentionSeconds * 1000;
    const index = this.#indexTriple(record.account, record.project);
    if (!record.admin) {
      const [added, active] = (await this.#indexScripts.add(
        3,
        ...index,
        record.id,
        hash,
        this.#leavesAt(record),
        now,
        record.expiresAt ?? "+inf",
        limit ? limit.most : "",
      )) as [number, number?];
      if (added === 0 && limit) throw limit.refused(active ?? 0);
    }
    const created = await this.#createScript(
      1,
      this.#recordKey(hash),
      JSON.stringify(fixed),
      status,
      ttlMs === null ? "" : Math.max(1, ttlMs),
    );
    if (created === 1) return true;
    if (!record.admin) await this.#indexScripts.remove(3, ...index, record.id);
    return false;
  }

  /** How many keys of the project count against its plan: not expired, neither disabled nor deleted. */
  async activeCount(account: string, project: string, now: number): Promise<number> {
    return Number(await this.#indexScripts.active(1, keyActiveKey(this.#prefix, account, project), now));
  }

  /** The names a record may have: its own, and outside Cluster mode the one before hash tags. */
  #recordKeys(hash: string): string[] {
    const own = this.#recordKey(hash);
    return this.#legacyNames ? [own, legacyKeyRecordKey(this.#prefix, hash)] : [own];
  }

  #indexKeys(account: string, project: string): string[] {
    const own = this.#indexKey(account, project);
    return this.#legacyNames ? [own, legacyKeyIndexKey(this.#prefix, account, project)] : [own];
  }

  /** One round trip (a second only for a key unknown under its own name, outside Cluster mode). */
  async get(hash: string): Promise<KeyRecord | null> {
    for (const name of this.#recordKeys(hash)) {
      const record = decode(await this.#redis.hgetall(name));
      if (record) return record;
    }
    return null;
  }

  /**
   * Marks the key disabled (it no longer counts against the plan); false when it does not exist.
   * `known`: its record as the caller read it (saves reading it again).
   */
  async disable(hash: string, known?: KeyRecord): Promise<boolean> {
    const disabled: string[] = [];
    for (const name of this.#recordKeys(hash)) {
      if ((await this.#disableScript(1, name)) === 1) disabled.push(name);
    }
    await this.#replicated(disabled);
    const record = disabled.length === 0 ? null : (known ?? (await this.get(hash)));
    if (record && !record.admin)
      await this.#redis.zrem(keyActiveKey(this.#prefix, record.account, record.project), record.id);
    return disabled.length > 0;
  }

  /** Every key id of a project with its hash (under the index's names). */
  async #indexEntries(account: string, project: string): Promise<Record<string, string>> {
    const indexes = await Promise.all(this.#indexKeys(account, project).map((k) => this.#redis.hgetall(k)));
    return Object.assign({}, ...indexes.reverse());
  }

  /** Removes ids from the index (under both names). */
  async #unindex(account: string, project: string, ids: string[]): Promise<void> {
    await this.#indexScripts.remove(3, ...this.#indexTriple(account, project), ...ids);
    if (this.#legacyNames) await this.#redis.hdel(legacyKeyIndexKey(this.#prefix, account, project), ...ids);
  }

  /** Every key of the project still on record (expired ones too, until Redis forgets them), oldest first. */
  async list(account: string, project: string, now: number): Promise<KeyRecord[]> {
    const [indexKey, expiryKey] = this.#indexPair(account, project);
    await this.#indexScripts.trim(2, indexKey, expiryKey, now);
    const index = await this.#indexEntries(account, project);
    const entries = Object.entries(index);
    if (entries.length === 0) return [];
    const results = await Promise.all(
      entries.map(async ([id, hash]) => ({ id, record: await this.get(hash).catch(() => null) })),
    );
    const records: KeyRecord[] = [];
    const stale: string[] = [];
    for (const { id, record } of results) {
      if (record) records.push(record);
      else stale.push(id);
    }
    if (stale.length > 0) await this.#unindex(account, project, stale);
    // Entries of an index written before the expiry order existed get their time (NX: others keep theirs).
    if (records.length > 0)
      await this.#redis.zadd(expiryKey, "NX", ...records.flatMap((r) => [this.#leavesAt(r), r.id]));
    return records.sort((a, b) => a.createdAt - b.createdAt);
  }

  /** A project's key by its id; null when the project has no such key. */
  async getById(account: string, project: string, id: string): Promise<KeyRecord | null> {
    const hash = (await this.#indexEntries(account, project))[id];
    return hash ? this.get(hash) : null;
  }

  /**
   * Deletes a key by its id; false when the project has no such key. Given
   * `projectUid`, only a key of that incarnation of the project.
   */
  async deleteById(account: string, project: string, id: string, projectUid?: string): Promise<boolean> {
    const hash = (await this.#indexEntries(account, project))[id];
    if (!hash) return false;
    if (projectUid !== undefined && (await this.get(hash))?.projectUid !== projectUid) return false;
    const recordKeys = this.#recordKeys(hash);
    const deleted = await Promise.all(recordKeys.map((key) => this.#redis.del(key)));
    await this.#unindex(account, project, [id]);
    await this.#replicated(recordKeys);
    return deleted.some((n) => n === 1);
  }

  /** Removes every key of a project (when the project is deleted). */
  async deleteProject(account: string, project: string): Promise<void> {
    const hashes = Object.values(await this.#indexEntries(account, project));
    const recordKeys = hashes.flatMap((h) => this.#recordKeys(h));
    await Promise.all(recordKeys.map((key) => this.#redis.del(key)));
    for (const indexKey of this.#indexKeys(account, project)) await this.#redis.del(indexKey);
    await this.#redis.del(keyIndexExpiryKey(this.#prefix, account, project));
    await this.#redis.del(keyActiveKey(this.#prefix, account, project));
    await this.#replicated(recordKeys);
  }

  /** Waits for a replica to have the revocation of `recordKeys` (see the class comment). */
  async #replicated(recordKeys: string[]): Promise<void> {
    if (!(await waitForReplica(this.#redis, recordKeys))) this.#onUnacknowledged();
  }

  /**
   * Renames records and indexes written under the names used before keys carried hash tags
   * (one SCAN of the prefix; RENAME keeps a record's expiry). Outside Cluster mode only: a
   * Cluster was never written with the old names. Resolves to how many keys were renamed.
   */
  async renameLegacyKeys(): Promise<number> {
    let renamed = 0;
    const legacy = legacyKeyPatterns(this.#prefix);
    let cursor = "0";
    do {
      const [next, names] = await this.#redis.scan(cursor, "MATCH", legacy.match, "COUNT", 1000);
      cursor = next;
      for (const name of names.filter((n) => !n.includes("{"))) {
        const pattern = [legacy.record, legacy.index].find((p) => name.startsWith(p.start));
        if (!pattern) continue;
        if ((await this.#redis.renamenx(name, pattern.rename(name))) === 1) {
          renamed++;
          continue;
        }
        // An index this version wrote to meanwhile: merge the old entries in.
        if (pattern === legacy.index && (await this.#redis.type(name)) === "hash") {
          const entries = await this.#redis.hgetall(name);
          if (Object.keys(entries).length > 0) await this.#redis.hset(pattern.rename(name), entries);
          await this.#redis.persist(pattern.rename(name)); // entries not yet scored: no expiry until listed
        }
        await this.#redis.del(name);
        renamed++;
      }
    } while (cursor !== "0");
    return renamed;
  }
}

/** The fixed part of a record (everything but its status), as readStoredJson returns it. */
type FixedFields = Omit<KeyRecord, "status">;

/**
 * Fixed parts already read, by their stored text: the text of a record never changes (only its
 * status does, in a field of its own), and a key is read on every request it opens. Frozen, since
 * every record read from the same text shares them; emptied when full.
 */
const decoded = new Map<string, FixedFields>();
const DECODED_LIMIT = 2000;

function frozen<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) frozen(inner);
    Object.freeze(value);
  }
  return value;
}

function decode(fields: Record<string, string> | null | undefined): KeyRecord | null {
  if (!fields?.d) return null;
  let fixed = decoded.get(fields.d);
  if (!fixed) {
    fixed = frozen(readStoredJson(storedKeyFields, "key record", fields.d) as FixedFields);
    if (decoded.size >= DECODED_LIMIT) decoded.clear();
    decoded.set(fields.d, fixed);
  }
  return { ...fixed, status: (fields.s === "disabled" ? "disabled" : "active") as KeyStatus };
}
