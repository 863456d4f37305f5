/**
 * The change feed (docs/realtime.md): every committed write appends one event
 * per changed row to its project's Redis Stream (`feedStreamKey`, in the slot of
 * the tenant database, like the write's intent). An event is written in the step
 * that completes the write and in no other:
 *  - without transactions, by the script that releases the write intent after
 *    the last write applied (write-intents.ts, FINISH): the events and the end
 *    of the intent are one Redis step. A write that is undone (by the request or
 *    by recovery, intent-recoverer.ts, which always undoes) releases its intent
 *    without events;
 *  - with transactions, the events are written into the transaction itself (the
 *    feed outbox, feed-outbox.ts) and appended from there right after the commit
 *    (transaction-feed.ts), or later by the outbox sweeper when that append could
 *    not happen (feed-outbox-sweeper.ts). `appendOnce` marks the append in the
 *    same script, so the events are in the stream once whoever appends them.
 * Either way the write's answer then waits for a Redis replica to have that step
 * (write-replication.ts), so that a failover does not lose an acknowledged write's events.
 *
 * Each append trims the stream by length (`MAXLEN ~`) and by age (`MINID ~`).
 */
import { randomUUID } from "node:crypto";
import { BSON } from "mongodb";
import { z } from "zod";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { pairsOf } from "../../../../shared/redis/flat-pairs.ts";
import { feedAppendedKey, feedStreamKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";
import { readStored, readStoredJson } from "../../../../shared/stored-json.ts";
import { ejsonText } from "./ejson-text.ts";
import type { TenantStorage } from "./storage-names.ts";
import { storedRow, storedRowId } from "./stored-rows.ts";
import type { RowDocument, RowId, RowWrite } from "./tenant-rows.ts";

/**
 * Lua: appends the events of ARGV[n] (JSON list of field/value lists) to stream KEYS[k], keeping
 * about ARGV[n+1] events and none older than ARGV[n+2] ms. Defines `append_feed(key, n)`.
 */
export const APPEND_FEED_LUA = `
local function append_feed(stream, n)
  local entries = cjson.decode(ARGV[n])
  if #entries == 0 then return 0 end
  for _, fields in ipairs(entries) do
    redis.call('XADD', stream, 'MAXLEN', '~', ARGV[n + 1], '*', unpack(fields))
  end
  local t = redis.call('TIME')
  local oldest = tonumber(t[1]) * 1000 - tonumber(ARGV[n + 2])
  redis.call('XTRIM', stream, 'MINID', '~', string.format('%d', oldest))
  return #entries
end`;

// KEYS: stream, the transaction's mark; ARGV: entries, max length, max age ms. The mark lives as
// long as the stream keeps events (max age): 0 when the events were appended before.
const APPEND_ONCE = `${APPEND_FEED_LUA}
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then return -1 end
return append_feed(KEYS[1], 1)`;

export interface FeedRetention {
  /** About how many events a stream keeps. */
  maxLength: number;
  /** About how long a stream keeps an event. */
  maxAgeMs: number;
}

/** One write's events on their way to its project's stream, with the stream's retention. */
export interface FeedBatch extends FeedRetention {
  /** The write's id (every event carries it). */
  tx: string;
  /** The tenant database the write went to (where a transaction keeps its events: feed-outbox.ts). */
  database: string;
  stream: string;
  /** The key `appendOnce` sets with the events (feedAppendedKey). */
  appendedKey: string;
  /** Stream entries: field/value lists. */
  entries: string[][];
}

/** The script arguments of APPEND_FEED_LUA for `batch` (entries, max length, max age); none without one. */
export function appendArgs(batch: FeedBatch | undefined): string[] {
  if (!batch) return ["[]", "0", "0"];
  return [JSON.stringify(batch.entries), String(batch.maxLength), String(batch.maxAgeMs)];
}

export type FeedVerb = "INSERT" | "UPDATE" | "DELETE";

/** One event as read back from a stream. */
export interface FeedEvent {
  /** The stream entry id (`<ms>-<seq>`): the position to resume after. */
  id: string;
  /** The id of the write (one per committed request). */
  tx: string;
  table: string;
  verb: FeedVerb;
  /** The row's `_id`; in entries of earlier releases, a composite key's values. */
  key: RowId | RowId[];
  /** The row as committed (stored form: columns, `_id`, `_ck`); null for a delete. */
  row: RowDocument | null;
  /**
   * An update's or a delete's row as it was (readers check their filters on it: a row that matched
   * and no longer does leaves their view); null for an insert, and for an update appended by a
   * release that did not record it.
   */
  oldRow: RowDocument | null;
  /** The row's checksum before the write; null for an insert. */
  oldChecksum: string | null;
  /** The rules that ran for the row in this write (as `?rulesummary=true` names them). */
  rules: string[];
}

const VERBS: Record<RowWrite["kind"], FeedVerb> = { insert: "INSERT", update: "UPDATE", delete: "DELETE" };
const FEED_VERBS = new Set<string>(Object.values(VERBS));

/** The stream entry of one row write. */
function entryOf(write: RowWrite, tx: string, rules: string[]): string[] {
  const row = write.kind === "delete" ? write.before : write.after;
  const fields = ["tx", tx, "table", write.table, "verb", VERBS[write.kind], "key", JSON.stringify(row._id)];
  if (write.kind !== "delete") fields.push("row", ejsonText(write.after));
  if (write.kind !== "insert") {
    fields.push("oldChecksum", write.before._ck);
    fields.push("oldRow", ejsonText(write.before));
  }
  if (rules.length > 0) fields.push("rules", JSON.stringify(rules));
  return fields;
}

/** An event's key as its entry stores it (JSON text): the row's `_id`, or (earlier) a composite key's values. */
const storedFeedKey = z.union([storedRowId, z.array(storedRowId)]);

/** The rules an event names, as its entry stores them (JSON text of their names). */
const storedRules = z.array(z.string());

/** Reads one stream entry back; null when it is not an event of this feed. */
export function parseFeedEntry(id: string, flat: string[]): FeedEvent | null {
  const f = new Map(pairsOf(flat));
  const verb = f.get("verb") as FeedVerb | undefined;
  const table = f.get("table");
  const key = f.get("key");
  const tx = f.get("tx");
  if (!verb || !FEED_VERBS.has(verb) || !table || key === undefined || !tx) return null;
  const row = f.get("row");
  const oldRow = f.get("oldRow");
  const ejson = (text: string | undefined) =>
    text === undefined
      ? null
      : readStored(storedRow, "feed event's row", BSON.EJSON.parse(text, { relaxed: true }));
  return {
    id,
    tx,
    table,
    verb,
    key: readStoredJson(storedFeedKey, "feed event's key", key),
    row: ejson(row),
    oldRow: ejson(oldRow),
    oldChecksum: f.get("oldChecksum") ?? null,
    rules: readStoredJson(storedRules, "feed event's rules", f.get("rules") ?? "[]"),
  };
}

export class ChangeFeed {
  readonly retention: FeedRetention;
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #appendOnce: Script;

  constructor(redis: RedisClient, prefix: string, retention: FeedRetention) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.retention = retention;
    this.#appendOnce = defineScript(redis, "feed_append_once", APPEND_ONCE);
  }

  /** The stream of a project's events. */
  streamOf(storage: TenantStorage): string {
    return feedStreamKey(this.#prefix, storage.database, storage.collectionPrefix);
  }

  /** The events of one write (a fresh transaction id), one per row write, in the plan's order. */
  batch(
    storage: TenantStorage,
    writes: RowWrite[],
    rulesOf: (w: RowWrite) => string[] = () => [],
  ): FeedBatch {
    const tx = randomUUID();
    return {
      ...this.retention,
      tx,
      database: storage.database,
      stream: this.streamOf(storage),
      appendedKey: feedAppendedKey(this.#prefix, storage.database, tx),
      entries: writes.map((w) => entryOf(w, tx, rulesOf(w))),
    };
  }

  /**
   * Appends a committed transaction's events unless they were appended before (the mark at
   * `batch.appendedKey`, set in the same script). Resolves to whether this call appended them;
   * rejects when Redis cannot be reached (the events then wait in the outbox).
   */
  async appendOnce(batch: FeedBatch): Promise<boolean> {
    const appended = await this.#appendOnce(2, batch.stream, batch.appendedKey, ...appendArgs(batch));
    return appended !== -1;
  }

  /** Up to `count` events of `storage`'s project after position `after` (`0` for the oldest kept). */
  async read(storage: TenantStorage, after: string, count: number): Promise<FeedEvent[]> {
    const entries = await this.#redis.xrange(this.streamOf(storage), `(${after}`, "+", "COUNT", count);
    return entries.flatMap(([id, flat]) => parseFeedEntry(id, flat) ?? []);
  }
}
