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
 *  - with transactions, by one script call right after the commit (unit-of-work.ts).
 * Either way the write's answer then waits for a Redis replica to have that step
 * (write-replication.ts), so that a failover does not lose an acknowledged write's events.
 *
 * Each append trims the stream by length (`MAXLEN ~`) and by age (`MINID ~`).
 */
import { randomUUID } from "node:crypto";
import { BSON } from "mongodb";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { feedStreamKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";
import type { TenantStorage } from "./storage-names.ts";
import type { RowDocument, RowId, RowWrite } from "./tenant-rows.ts";
import type { WriteReplication } from "./write-replication.ts";

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

// KEYS: stream; ARGV: entries, max length, max age ms.
const APPEND = `${APPEND_FEED_LUA}
return append_feed(KEYS[1], 1)`;

export interface FeedRetention {
  /** About how many events a stream keeps. */
  maxLength: number;
  /** About how long a stream keeps an event. */
  maxAgeMs: number;
}

/** One write's events on their way to its project's stream, with the stream's retention. */
export interface FeedBatch extends FeedRetention {
  stream: string;
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
  key: RowId;
  /** The row as committed (stored form: columns, `_id`, `_ck`); null for a delete. */
  row: RowDocument | null;
  /** A delete's row as it was (readers check their row filters on it); null otherwise. */
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
  if (write.kind !== "delete") fields.push("row", BSON.EJSON.stringify(write.after, { relaxed: true }));
  if (write.kind !== "insert") fields.push("oldChecksum", write.before._ck);
  if (write.kind === "delete") fields.push("oldRow", BSON.EJSON.stringify(write.before, { relaxed: true }));
  if (rules.length > 0) fields.push("rules", JSON.stringify(rules));
  return fields;
}

/** Reads one stream entry back; null when it is not an event of this feed. */
export function parseFeedEntry(id: string, flat: string[]): FeedEvent | null {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) f.set(flat[i]!, flat[i + 1]!);
  const verb = f.get("verb") as FeedVerb | undefined;
  const table = f.get("table");
  const key = f.get("key");
  const tx = f.get("tx");
  if (!verb || !FEED_VERBS.has(verb) || !table || key === undefined || !tx) return null;
  const row = f.get("row");
  const oldRow = f.get("oldRow");
  const ejson = (text: string | undefined) =>
    text === undefined ? null : (BSON.EJSON.parse(text, { relaxed: true }) as RowDocument);
  return {
    id,
    tx,
    table,
    verb,
    key: JSON.parse(key) as RowId,
    row: ejson(row),
    oldRow: ejson(oldRow),
    oldChecksum: f.get("oldChecksum") ?? null,
    rules: JSON.parse(f.get("rules") ?? "[]") as string[],
  };
}

export class ChangeFeed {
  readonly retention: FeedRetention;
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #append: Script;
  readonly #onLost: (events: number, error: string) => void;

  readonly #replicated: WriteReplication | undefined;

  constructor(
    redis: RedisClient,
    prefix: string,
    retention: FeedRetention,
    onLost: (events: number, error: string) => void,
    replicated?: WriteReplication,
  ) {
    this.#onLost = onLost;
    this.#replicated = replicated;
    this.#redis = redis;
    this.#prefix = prefix;
    this.retention = retention;
    this.#append = defineScript(redis, "feed_append", APPEND);
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
      stream: this.streamOf(storage),
      entries: writes.map((w) => entryOf(w, tx, rulesOf(w))),
    };
  }

  /**
   * Appends the events of a MongoDB transaction that committed. The write stands whatever
   * happens here, so a failure is not the request's: it is counted and logged (without the
   * events, which carry rows), and those events are missing from the feed.
   */
  async afterCommit(batch: FeedBatch): Promise<void> {
    if (batch.entries.length === 0) return;
    try {
      await this.#append(1, batch.stream, ...appendArgs(batch));
    } catch (err) {
      this.#onLost(batch.entries.length, err instanceof Error ? err.name : typeof err);
      return;
    }
    // The answer waits for a replica to have the events (write-replication.ts); the write stands anyway.
    await this.#replicated?.().catch(() => {});
  }

  /** Up to `count` events of `storage`'s project after position `after` (`0` for the oldest kept). */
  async read(storage: TenantStorage, after: string, count: number): Promise<FeedEvent[]> {
    const entries = await this.#redis.xrange(this.streamOf(storage), `(${after}`, "+", "COUNT", count);
    return entries.flatMap(([id, flat]) => parseFeedEntry(id, flat) ?? []);
  }
}
