/**
 * Webhook subscriptions and their delivery state, in Redis beside the project's
 * change feed (docs/webhooks.md). Every key of one project incarnation carries
 * the tenant database's hash tag (shared/redis/key-layout.ts), so each step
 * below is one script in one slot:
 *  - a subscription is a record in the project's hash plus a consumer group
 *    `hook:<id>` on the feed stream (created at `$`: events from then on) and on
 *    the subscription's replay stream (dead letters sent again);
 *  - a first attempt reads new entries with XREADGROUP; an entry left pending by a
 *    process that died is taken over with XAUTOCLAIM;
 *  - a failed attempt leaves the group (XACK) for the subscription's retry state
 *    in the same script: the rendered body (so trimming the feed cannot lose it)
 *    and a due time in a sorted set. A process takes a due retry by pushing its
 *    due time one claim period ahead (a lease: if it dies, the retry is due again);
 *  - past the retry window the body is parked in the dead letters, which an
 *    admin lists and sends again (to the replay stream);
 *  - a subscription whose attempts time out is backed off as a whole by its circuit
 *    (hooks/circuit.ts), one field of the project's circuits hash, changed by compare-and-set.
 */
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import {
  feedStreamKey,
  webhookCircuitsKey,
  webhookProjectsKey,
  webhookStateKey,
  webhookSubscriptionsKey,
} from "../../../../shared/redis/key-layout.ts";
import { defineNamedScript, type NamedScript, type ScriptShape } from "../../../../shared/redis/scripts.ts";
import { readStoredJson } from "../../../../shared/stored-json.ts";
import type { TenantStorage } from "./storage-names.ts";
import {
  type DeadLetter,
  type DeliveryLogEntry,
  deadLetterRecord,
  deliveryLogRecord,
  type RetryState,
  retryStateRecord,
  type WebhookProject,
  type WebhookSubscription,
  webhookProjectRecord,
  webhookSubscriptionRecord,
} from "./webhook-records.ts";

export type {
  DeadLetter,
  DeliveryLogEntry,
  DeliveryOutcome,
  RetryState,
  WebhookProject,
  WebhookSubscription,
} from "./webhook-records.ts";

/** What an update found: done, the subscription gone, or changed by someone else since it was read. */
export type UpdateOutcome = "updated" | "gone" | "changed";

/** Where an entry was read: the project's feed, or the subscription's replay stream. */
export type DeliverySource = "feed" | "replay";

/** The group of a subscription on its project's feed and on its replay stream. */
export const groupOf = (subscription: string) => `hook:${subscription}`;

// KEYS: subscriptions hash, feed, replay. ARGV: id, record, group, most subscriptions of the project.
// 1 created, 0 the project has the most it may have already.
const CREATE = `
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
for i = 2, 3 do
  local ok = pcall(redis.call, 'XGROUP', 'CREATE', KEYS[i], ARGV[3], '$', 'MKSTREAM')
end
return 1`;
const CREATE_SHAPE = {
  keys: ["subscriptions", "feed", "replay"],
  args: ["id", "record", "group", "most"],
} as const;

// KEYS: subscriptions hash. ARGV: id, the record as it was read, the new record.
// 1 updated, 0 gone, -1 changed since it was read.
const UPDATE = `
local now = redis.call('HGET', KEYS[1], ARGV[1])
if not now then return 0 end
if now ~= ARGV[2] then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1`;
const UPDATE_SHAPE = { keys: ["subscriptions"], args: ["id", "before", "after"] } as const;

// KEYS: subscriptions hash, feed, replay, retry, state, dead, log, circuits hash. ARGV: id, group.
const DELETE = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[8], ARGV[1])
pcall(redis.call, 'XGROUP', 'DESTROY', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
return 1`;
const DELETE_SHAPE = {
  keys: ["subscriptions", "feed", "replay", "retry", "state", "dead", "log", "circuits"],
  args: ["id", "group"],
} as const;

// KEYS: circuits hash, subscriptions hash. ARGV: id, the circuit as it was read ('' for none),
// the new one ('' for none: closed). {1} set, {0} the subscription is gone, {-1, now} changed since it
// was read (now: '' for none).
const SET_CIRCUIT = `
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return {0} end
local now = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if now ~= ARGV[2] then return {-1, now} end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
return {1}`;
const SET_CIRCUIT_SHAPE = { keys: ["circuits", "subscriptions"], args: ["id", "before", "after"] } as const;

/** Lua: the entry ARGV[e] leaves group ARGV[g] of stream `key` (a replay entry leaves the stream too). */
const SETTLE_LUA = `
local function settle(key, g, e, drop)
  if ARGV[e] == '' then return end
  redis.call('XACK', key, ARGV[g], ARGV[e])
  if ARGV[drop] == '1' then redis.call('XDEL', key, ARGV[e]) end
end`;

// KEYS: state, retry, source stream, subscriptions hash. ARGV: webhook id, state, due at, group,
// entry id ('' for a retry), drop, subscription id. Nothing once the subscription is gone.
const FAIL = `${SETTLE_LUA}
if redis.call('HEXISTS', KEYS[4], ARGV[7]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
settle(KEYS[3], 4, 5, 6)
return 1`;
const FAIL_SHAPE = {
  keys: ["state", "retry", "source", "subscriptions"],
  args: ["webhookId", "record", "dueAt", "group", "entry", "drop", "id"],
} as const;

// KEYS: state, retry. ARGV: webhook id.
const RETRIED = `
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
return 1`;
const RETRIED_SHAPE = { keys: ["state", "retry"], args: ["webhookId"] } as const;

// KEYS: state, retry, dead, source stream, subscriptions hash. ARGV: webhook id, dead letter, group,
// entry id ('' for a retry), drop, subscription id. Nothing once the subscription is gone.
const PARK = `${SETTLE_LUA}
if redis.call('HEXISTS', KEYS[5], ARGV[6]) == 0 then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
settle(KEYS[4], 3, 4, 5)
return 1`;
const PARK_SHAPE = {
  keys: ["state", "retry", "dead", "source", "subscriptions"],
  args: ["webhookId", "record", "group", "entry", "drop", "id"],
} as const;

// KEYS: log, subscriptions hash. ARGV: entry, kept, subscription id. Nothing once the subscription is gone.
const LOG = `
if redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 then return 0 end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
return 1`;
const LOG_SHAPE = { keys: ["log", "subscriptions"], args: ["entry", "keep", "id"] } as const;

// KEYS: retry, state. ARGV: now, lease until, count. Takes the due retries for one lease.
const TAKE_DUE = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(due) do
  local state = redis.call('HGET', KEYS[2], id)
  if state then
    redis.call('ZADD', KEYS[1], ARGV[2], id)
    table.insert(out, state)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out`;
const TAKE_DUE_SHAPE = { keys: ["retry", "state"], args: ["now", "leaseUntil", "count"] } as const;

// KEYS: dead, replay. ARGV: webhook id ('' for all). Moves dead letters to the replay stream.
const REPLAY = `
local ids = {}
if ARGV[1] == '' then ids = redis.call('HKEYS', KEYS[1]) else ids = {ARGV[1]} end
local n = 0
for _, id in ipairs(ids) do
  local dead = redis.call('HGET', KEYS[1], id)
  if dead then
    redis.call('XADD', KEYS[2], '*', 'dead', dead)
    redis.call('HDEL', KEYS[1], id)
    n = n + 1
  end
end
return n`;
const REPLAY_SHAPE = { keys: ["dead", "replay"], args: ["webhookId"] } as const;

// KEYS: feed. ARGV: group. Events trimmed from the feed before the group read them: counted once
// (the group's read counter is moved past them), 0 when none.
const TRIMMED_UNREAD = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local function map(flat) local m = {} for i = 1, #flat, 2 do m[flat[i]] = flat[i + 1] end return m end
local function parts(id) local ms, seq = string.match(id, '^(%d+)-(%d+)$') return tonumber(ms), tonumber(seq) end
local stream = map(redis.call('XINFO', 'STREAM', KEYS[1]))
local group
for _, flat in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  local g = map(flat)
  if g['name'] == ARGV[1] then group = g end
end
if not group or not group['entries-read'] then return 0 end
local read, last, kept = group['entries-read'], group['last-delivered-id'], stream['length']
if kept > 0 then
  local fm, fs = parts(stream['first-entry'][1])
  local lm, ls = parts(last)
  if fm < lm or (fm == lm and fs <= ls) then return 0 end
end
local unread = stream['entries-added'] - read - kept
if unread <= 0 then return 0 end
redis.call('XGROUP', 'SETID', KEYS[1], ARGV[1], last, 'ENTRIESREAD', read + unread)
return unread`;
const TRIMMED_UNREAD_SHAPE = { keys: ["feed"], args: ["group"] } as const;

// KEYS: stream. ARGV: group, idle ms, this consumer. Drops consumers (processes gone) that hold
// nothing and have not been heard of for the idle time; how many.
const DROP_IDLE_CONSUMERS = `
local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if not ok then return 0 end
local n = 0
for _, flat in ipairs(consumers) do
  local c = {}
  for i = 1, #flat, 2 do c[flat[i]] = flat[i + 1] end
  if c['name'] ~= ARGV[3] and c['pending'] == 0 and c['idle'] > tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], c['name'])
    n = n + 1
  end
end
return n`;
const DROP_IDLE_CONSUMERS_SHAPE = { keys: ["stream"], args: ["group", "idleMs", "self"] } as const;

type StreamEntry = [string, string[]];

/** What a compare-and-set of a circuit found: done, the subscription gone, or the circuit as it is now (text, "" for none). */
export type CircuitSetOutcome =
  | { outcome: "set" }
  | { outcome: "gone" }
  | { outcome: "changed"; now: string };

/** A script of the store, called with its keys and arguments by name. */
type Named<S> = S extends ScriptShape<infer K, infer A> ? NamedScript<K, A> : never;

export class WebhookStore {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #create: Named<typeof CREATE_SHAPE>;
  readonly #update: Named<typeof UPDATE_SHAPE>;
  readonly #delete: Named<typeof DELETE_SHAPE>;
  readonly #fail: Named<typeof FAIL_SHAPE>;
  readonly #retried: Named<typeof RETRIED_SHAPE>;
  readonly #park: Named<typeof PARK_SHAPE>;
  readonly #takeDue: Named<typeof TAKE_DUE_SHAPE>;
  readonly #replay: Named<typeof REPLAY_SHAPE>;
  readonly #log: Named<typeof LOG_SHAPE>;
  readonly #dropIdle: Named<typeof DROP_IDLE_CONSUMERS_SHAPE>;
  readonly #trimmed: Named<typeof TRIMMED_UNREAD_SHAPE>;
  readonly #setCircuit: Named<typeof SET_CIRCUIT_SHAPE>;
  /** The text each subscription was read from: an update compares the stored record with it. */
  readonly #readFrom = new WeakMap<WebhookSubscription, string>();

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#create = defineNamedScript(redis, "hook_create", CREATE, CREATE_SHAPE);
    this.#update = defineNamedScript(redis, "hook_update", UPDATE, UPDATE_SHAPE);
    this.#delete = defineNamedScript(redis, "hook_delete", DELETE, DELETE_SHAPE);
    this.#fail = defineNamedScript(redis, "hook_fail", FAIL, FAIL_SHAPE);
    this.#retried = defineNamedScript(redis, "hook_retried", RETRIED, RETRIED_SHAPE);
    this.#park = defineNamedScript(redis, "hook_park", PARK, PARK_SHAPE);
    this.#takeDue = defineNamedScript(redis, "hook_take_due", TAKE_DUE, TAKE_DUE_SHAPE);
    this.#replay = defineNamedScript(redis, "hook_replay", REPLAY, REPLAY_SHAPE);
    this.#log = defineNamedScript(redis, "hook_log", LOG, LOG_SHAPE);
    this.#dropIdle = defineNamedScript(
      redis,
      "hook_drop_idle_consumers",
      DROP_IDLE_CONSUMERS,
      DROP_IDLE_CONSUMERS_SHAPE,
    );
    this.#trimmed = defineNamedScript(redis, "hook_trimmed_unread", TRIMMED_UNREAD, TRIMMED_UNREAD_SHAPE);
    this.#setCircuit = defineNamedScript(redis, "hook_set_circuit", SET_CIRCUIT, SET_CIRCUIT_SHAPE);
  }

  #circuits(s: TenantStorage): string {
    return webhookCircuitsKey(this.#prefix, s.database, s.collectionPrefix);
  }

  #subscriptions(s: TenantStorage): string {
    return webhookSubscriptionsKey(this.#prefix, s.database, s.collectionPrefix);
  }

  #feed(s: TenantStorage): string {
    return feedStreamKey(this.#prefix, s.database, s.collectionPrefix);
  }

  #part(s: TenantStorage, id: string, part: "retry" | "state" | "dead" | "log" | "replay"): string {
    return webhookStateKey(this.#prefix, s.database, s.collectionPrefix, id, part);
  }

  #source(s: TenantStorage, id: string, source: DeliverySource): string {
    return source === "feed" ? this.#feed(s) : this.#part(s, id, "replay");
  }

  /**
   * Stores the subscription and starts its consumer groups at the feed's end; false (nothing stored)
   * when the project has `most` subscriptions already.
   */
  async create(project: WebhookProject, subscription: WebhookSubscription, most: number): Promise<boolean> {
    const { storage } = project;
    // The index first: an entry whose project has no subscription only costs a look.
    await this.#redis.hset(
      webhookProjectsKey(this.#prefix),
      `${storage.database}/${storage.collectionPrefix}`,
      JSON.stringify(project),
    );
    const created = await this.#create({
      subscriptions: this.#subscriptions(storage),
      feed: this.#feed(storage),
      replay: this.#part(storage, subscription.id, "replay"),
      id: subscription.id,
      record: JSON.stringify(subscription),
      group: groupOf(subscription.id),
      most,
    });
    return created === 1;
  }

  async list(storage: TenantStorage): Promise<WebhookSubscription[]> {
    const all = await this.#redis.hvals(this.#subscriptions(storage));
    return all
      .map((text) => this.#subscription(text))
      .sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id));
  }

  async get(storage: TenantStorage, id: string): Promise<WebhookSubscription | null> {
    const text = await this.#redis.hget(this.#subscriptions(storage), id);
    return text === null ? null : this.#subscription(text);
  }

  /** A subscription read from its stored text (which an update of it compares with). */
  #subscription(text: string): WebhookSubscription {
    const subscription = readStoredJson(webhookSubscriptionRecord, "webhook subscription", text);
    this.#readFrom.set(subscription, text);
    return subscription;
  }

  /**
   * Replaces the subscription's record by `after` if it still is `before` (as `get` answered it):
   * its groups, retries, dead letters and log stay as they are.
   */
  async update(
    storage: TenantStorage,
    before: WebhookSubscription,
    after: WebhookSubscription,
  ): Promise<UpdateOutcome> {
    const n = await this.#update({
      subscriptions: this.#subscriptions(storage),
      id: before.id,
      before: this.#readFrom.get(before) ?? JSON.stringify(before),
      after: JSON.stringify(after),
    });
    return n === 1 ? "updated" : n === 0 ? "gone" : "changed";
  }

  /** Removes the subscription, its groups and everything its delivery kept; false when there was none. */
  async delete(storage: TenantStorage, id: string): Promise<boolean> {
    const n = await this.#delete({
      subscriptions: this.#subscriptions(storage),
      feed: this.#feed(storage),
      replay: this.#part(storage, id, "replay"),
      retry: this.#part(storage, id, "retry"),
      state: this.#part(storage, id, "state"),
      dead: this.#part(storage, id, "dead"),
      log: this.#part(storage, id, "log"),
      circuits: this.#circuits(storage),
      id,
      group: groupOf(id),
    });
    return n === 1;
  }

  /** The project's circuits that are not closed, as stored (text), by subscription id. */
  async circuits(storage: TenantStorage): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.#redis.hgetall(this.#circuits(storage))));
  }

  /** One subscription's circuit as stored (text), "" when it is closed. */
  async circuit(storage: TenantStorage, id: string): Promise<string> {
    return (await this.#redis.hget(this.#circuits(storage), id)) ?? "";
  }

  /** Replaces the subscription's circuit `before` (as stored, "" for none) by `after` ("" for none). */
  async setCircuit(
    storage: TenantStorage,
    id: string,
    before: string,
    after: string,
  ): Promise<CircuitSetOutcome> {
    const [n, now] = (await this.#setCircuit({
      circuits: this.#circuits(storage),
      subscriptions: this.#subscriptions(storage),
      id,
      before,
      after,
    })) as [number, string?];
    return n === 1
      ? { outcome: "set" }
      : n === 0
        ? { outcome: "gone" }
        : { outcome: "changed", now: now ?? "" };
  }

  /** The project incarnations that have (or had) subscriptions. */
  async projects(): Promise<WebhookProject[]> {
    const all = await this.#redis.hvals(webhookProjectsKey(this.#prefix));
    return all.map((text) => readStoredJson(webhookProjectRecord, "webhook project", text));
  }

  /** Drops an incarnation that no longer exists: its subscriptions and their state. */
  async forgetProject(project: WebhookProject): Promise<void> {
    for (const s of await this.list(project.storage)) await this.delete(project.storage, s.id);
    const { storage } = project;
    await this.#redis.del(this.#circuits(storage));
    await this.#redis.hdel(
      webhookProjectsKey(this.#prefix),
      `${storage.database}/${storage.collectionPrefix}`,
    );
  }

  /** Up to `count` entries of `source` no consumer of the subscription was given yet. */
  async readNew(
    storage: TenantStorage,
    id: string,
    consumer: string,
    source: DeliverySource,
    count: number,
  ): Promise<StreamEntry[]> {
    const reply = (await this.#redis.xreadgroup(
      "GROUP",
      groupOf(id),
      consumer,
      "COUNT",
      count,
      "STREAMS",
      this.#source(storage, id, source),
      ">",
    )) as [string, StreamEntry[]][] | null;
    return reply?.[0]?.[1] ?? [];
  }

  /**
   * Entries of `source` another consumer was given and left without an answer for `minIdleMs`
   * (its process died mid-delivery), now this consumer's; `deleted`: such entries the stream
   * no longer keeps (trimmed meanwhile).
   */
  async takeOver(
    storage: TenantStorage,
    id: string,
    consumer: string,
    source: DeliverySource,
    minIdleMs: number,
    cursor: string,
    count: number,
  ): Promise<{ next: string; entries: StreamEntry[]; deleted: string[] }> {
    const [next, entries, deleted] = (await this.#redis.xautoclaim(
      this.#source(storage, id, source),
      groupOf(id),
      consumer,
      minIdleMs,
      cursor,
      "COUNT",
      count,
    )) as [string, (StreamEntry | null)[], string[] | undefined];
    return {
      next,
      entries: entries.filter((e): e is StreamEntry => e !== null),
      deleted: deleted ?? [],
    };
  }

  /** Forgets the consumers of processes gone long ago (nothing pending, silent for `idleMs`). */
  async dropIdleConsumers(
    storage: TenantStorage,
    id: string,
    source: DeliverySource,
    idleMs: number,
    self: string,
  ): Promise<number> {
    return (await this.#dropIdle({
      stream: this.#source(storage, id, source),
      group: groupOf(id),
      idleMs,
      self,
    })) as number;
  }

  /** First attempts answered (or events the subscription does not take): the entries leave the group's pending list. */
  async ack(storage: TenantStorage, id: string, source: DeliverySource, entries: string[]): Promise<void> {
    if (entries.length === 0) return;
    const key = this.#source(storage, id, source);
    if (source === "feed") await this.#redis.xack(key, groupOf(id), ...entries);
    else
      await this.#redis
        .multi()
        .xack(key, groupOf(id), ...entries)
        .xdel(key, ...entries)
        .exec();
  }

  /** A failed attempt: its retry state and due time; a first attempt also leaves the group, in the same step. */
  async fail(
    storage: TenantStorage,
    id: string,
    from: { source: DeliverySource; entry: string } | null,
    state: RetryState,
    dueAt: number,
  ): Promise<void> {
    await this.#fail({
      state: this.#part(storage, id, "state"),
      retry: this.#part(storage, id, "retry"),
      ...this.#settling(storage, id, from),
      subscriptions: this.#subscriptions(storage),
      webhookId: state.webhookId,
      record: JSON.stringify(state),
      dueAt,
    });
  }

  /** A retry answered: its state is dropped. */
  async retried(storage: TenantStorage, id: string, webhookId: string): Promise<void> {
    await this.#retried({
      state: this.#part(storage, id, "state"),
      retry: this.#part(storage, id, "retry"),
      webhookId,
    });
  }

  /** Out of retries: the event is parked as a dead letter. */
  async park(
    storage: TenantStorage,
    id: string,
    from: { source: DeliverySource; entry: string } | null,
    dead: DeadLetter,
  ): Promise<void> {
    await this.#park({
      state: this.#part(storage, id, "state"),
      retry: this.#part(storage, id, "retry"),
      dead: this.#part(storage, id, "dead"),
      ...this.#settling(storage, id, from),
      subscriptions: this.#subscriptions(storage),
      webhookId: dead.webhookId,
      record: JSON.stringify(dead),
    });
  }

  /**
   * What a script that settles an attempt needs of where it came from: the stream, the group and
   * the entry that leaves it ('' for a retry), and whether the entry leaves the stream too (a replay).
   */
  #settling(storage: TenantStorage, id: string, from: { source: DeliverySource; entry: string } | null) {
    return {
      source: this.#source(storage, id, from?.source ?? "feed"),
      group: groupOf(id),
      entry: from?.entry ?? "",
      drop: from?.source === "replay" ? "1" : "0",
      id,
    };
  }

  /** Up to `count` retries due at `now`, taken until `leaseUntil` (then due again unless settled). */
  async takeDue(
    storage: TenantStorage,
    id: string,
    now: number,
    leaseUntil: number,
    count: number,
  ): Promise<RetryState[]> {
    const states = (await this.#takeDue({
      retry: this.#part(storage, id, "retry"),
      state: this.#part(storage, id, "state"),
      now,
      leaseUntil,
      count,
    })) as string[];
    return states.map((text) => readStoredJson(retryStateRecord, "webhook retry state", text));
  }

  /** Retries waiting (for tests and the console). */
  async retrying(storage: TenantStorage, id: string): Promise<number> {
    return this.#redis.zcard(this.#part(storage, id, "retry"));
  }

  async log(storage: TenantStorage, id: string, entry: DeliveryLogEntry, keep: number): Promise<void> {
    const key = this.#part(storage, id, "log");
    await this.#log({
      log: key,
      subscriptions: this.#subscriptions(storage),
      entry: JSON.stringify(entry),
      keep,
      id,
    });
  }

  /** The newest `count` log entries, newest first. */
  async deliveryLog(storage: TenantStorage, id: string, count: number): Promise<DeliveryLogEntry[]> {
    const all = await this.#redis.lrange(this.#part(storage, id, "log"), 0, count - 1);
    return all.map((text) => readStoredJson(deliveryLogRecord, "webhook delivery log entry", text));
  }

  async deadLetters(storage: TenantStorage, id: string): Promise<DeadLetter[]> {
    const all = await this.#redis.hvals(this.#part(storage, id, "dead"));
    return all
      .map((text) => readStoredJson(deadLetterRecord, "webhook dead letter", text))
      .sort((a, b) => a.parkedAt - b.parkedAt || a.webhookId.localeCompare(b.webhookId));
  }

  /** Sends dead letters again (one, or all with `webhookId` null): how many there were. */
  async replay(storage: TenantStorage, id: string, webhookId: string | null): Promise<number> {
    return (await this.#replay({
      dead: this.#part(storage, id, "dead"),
      replay: this.#part(storage, id, "replay"),
      webhookId: webhookId ?? "",
    })) as number;
  }

  /** Drops one dead letter; false when there was none. */
  async discard(storage: TenantStorage, id: string, webhookId: string): Promise<boolean> {
    return (await this.#redis.hdel(this.#part(storage, id, "dead"), webhookId)) === 1;
  }

  /** Events the feed trimmed before the subscription read them (each counted once). */
  async trimmedUnread(storage: TenantStorage, id: string): Promise<number> {
    return (await this.#trimmed({ feed: this.#feed(storage), group: groupOf(id) })) as number;
  }
}
