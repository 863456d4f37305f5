/**
 * The feed outbox: where a write committed in a MongoDB transaction keeps its change-feed events
 * until they are in Redis. The events are inserted by the transaction itself (`record`, with the
 * transaction's session) into collection `feed_outbox` of the account's own database — the
 * database the write goes to, so the transaction still touches one database (one shard) and rows
 * stay in their account's database. After the commit the writer appends them and removes them
 * (transaction-feed.ts); whatever it could not append, the sweeper finds here
 * (feed-outbox-sweeper.ts). Records carry rows, so nothing reads them but those two. (Table
 * collections are `<project prefix>.<table>`: a name without a dot is never a table's.)
 *
 * Where the sweeper looks: `feed_outbox_databases` in META_DB names every database a writer used
 * the outbox of lately (`register`, before the transaction, at most once a minute per process and
 * database); the sweeper forgets a database whose outbox is empty and that nobody named for ten
 * minutes. So a sweep costs a query per database written in transactions lately, not per account.
 *
 * A write's events are kept in parts of at most PART_BYTES of JSON (a document holds 16 MiB),
 * each part a record with the write's id (`tx`); the parts are appended together.
 */
import type { ClientSession, Collection } from "mongodb";
import type { Connection, Model } from "mongoose";
import { z } from "zod";
import { perAccountCache } from "../../../../shared/cache/per-account-cache.ts";
import { readStoredJson } from "../../../../shared/stored-json.ts";
import type { FeedBatch } from "./change-feed.ts";
import { metaModel } from "./meta-model.ts";
import type { TenantDatabases } from "./tenant-databases.ts";

/** The outbox's collection in each account database. */
export const OUTBOX_COLLECTION = "feed_outbox";

/** A record's part of the batch's entries as stored: JSON text of the entries' flat field lists. */
const storedEntries = z.array(z.array(z.string()));

/** One part of a write's events, as stored. */
export interface OutboxRecord {
  /** `<tx>/<part, 4 digits>`: the parts of a write sort in order. */
  _id: string;
  tx: string;
  stream: string;
  appendedKey: string;
  /** JSON: this part's stream entries (field/value lists). */
  entries: string;
  maxLength: number;
  maxAgeMs: number;
  /** When the write recorded it (the sweeper leaves records younger than its interval to the writer). */
  at: Date;
}

/** A database whose outbox a writer used lately, and when it last said so. */
interface OutboxDatabase {
  _id: string;
  at: Date;
}

/** The JSON of a part's entries is at most this large (unless one entry alone is larger). */
export const PART_BYTES = 4 * 1024 * 1024;

/** Splits entries into runs whose JSON stays within `limit` bytes each. */
export function partsOf(entries: string[][], limit = PART_BYTES): string[][][] {
  const parts: string[][][] = [];
  let part: string[][] = [];
  let bytes = 2;
  for (const entry of entries) {
    const size = Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (part.length > 0 && bytes + size > limit) {
      parts.push(part);
      part = [];
      bytes = 2;
    }
    part.push(entry);
    bytes += size;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

/** The records of one write's events. */
export function outboxRecords(batch: FeedBatch, at: Date, limit = PART_BYTES): OutboxRecord[] {
  return partsOf(batch.entries, limit).map((entries, i) => ({
    _id: `${batch.tx}/${String(i).padStart(4, "0")}`,
    tx: batch.tx,
    stream: batch.stream,
    appendedKey: batch.appendedKey,
    entries: JSON.stringify(entries),
    maxLength: batch.maxLength,
    maxAgeMs: batch.maxAgeMs,
    at,
  }));
}

/** A write's events again, from all its records (in part order), in `database`. */
export function batchOf(database: string, first: OutboxRecord, ...more: OutboxRecord[]): FeedBatch {
  const sorted = [first, ...more].sort((a, b) => (a._id < b._id ? -1 : 1));
  return {
    tx: first.tx,
    database,
    stream: first.stream,
    appendedKey: first.appendedKey,
    maxLength: first.maxLength,
    maxAgeMs: first.maxAgeMs,
    entries: sorted.flatMap((r) => readStoredJson(storedEntries, "feed outbox record's entries", r.entries)),
  };
}

export interface OutboxTiming {
  /** How often a process names a database it keeps using again. */
  registerEveryMs: number;
  /** How long a database nobody named stays where the sweeper looks once its outbox is empty. */
  forgetAfterMs: number;
}

const TIMING: OutboxTiming = { registerEveryMs: 60_000, forgetAfterMs: 600_000 };

/** The memory for when each database was last named: 8 MiB, about 25,000 databases. */
const REGISTERED_BYTES = 8 * 1024 * 1024;

export class FeedOutbox {
  readonly #databases: TenantDatabases;
  readonly #registry: Model<OutboxDatabase>;
  readonly #timing: OutboxTiming;
  readonly #now: () => number;
  /**
   * When this process last named each database (and made its outbox's indexes), for the databases
   * written most recently within a memory budget: one forgotten is named (and indexed) again.
   */
  readonly #registered = perAccountCache<{ at: number }>(REGISTERED_BYTES);

  constructor(
    meta: Connection,
    databases: TenantDatabases,
    options: { timing?: Partial<OutboxTiming>; now?: () => number } = {},
  ) {
    this.#databases = databases;
    this.#timing = { ...TIMING, ...options.timing };
    this.#now = options.now ?? Date.now;
    this.#registry = metaModel<OutboxDatabase>(
      meta,
      databases.queryTimeoutMs,
      { name: "FeedOutboxDatabase", collection: "feed_outbox_databases" },
      { _id: String, at: Date },
    );
  }

  /** The outbox of one account database. */
  records(database: string): Collection<OutboxRecord> {
    return this.#databases.db(database).collection<OutboxRecord>(OUTBOX_COLLECTION);
  }

  /**
   * Before a transaction that will record events in `database`: names it where the sweeper looks
   * (and makes its outbox's indexes), unless this process did so within `registerEveryMs`.
   */
  async register(database: string): Promise<void> {
    const now = this.#now();
    const last = this.#registered.get(database)?.at;
    if (last !== undefined && now - last < this.#timing.registerEveryMs) return;
    if (last === undefined) {
      await this.records(database).createIndexes([{ key: { at: 1 } }, { key: { tx: 1 } }], {
        maxTimeMS: this.#databases.queryTimeoutMs,
      });
    }
    await this.#registry
      .updateOne({ _id: database }, { $set: { at: new Date(now) } }, { upsert: true })
      .exec();
    this.#registered.set(database, { at: now });
  }

  /** Keeps a write's events; inside its transaction when `session` is one (the only use but tests'). */
  async record(batch: FeedBatch, session?: ClientSession): Promise<void> {
    if (batch.entries.length === 0) return;
    await this.records(batch.database).insertMany(outboxRecords(batch, new Date(this.#now())), {
      session,
      maxTimeMS: this.#databases.queryTimeoutMs,
    });
  }

  /** Forgets a write's events (they are in the stream). */
  async remove(batch: Pick<FeedBatch, "database" | "tx">): Promise<void> {
    await this.records(batch.database).deleteMany(
      { tx: batch.tx },
      { maxTimeMS: this.#databases.queryTimeoutMs },
    );
  }

  /**
   * The databases whose outbox may hold records; `idle`: nobody named it for `forgetAfterMs` (only
   * such a one may be forgotten).
   */
  async databases(): Promise<{ name: string; idle: boolean }[]> {
    const named = await this.#registry.find({}).lean<OutboxDatabase[]>().exec();
    const idleSince = this.#now() - this.#timing.forgetAfterMs;
    return named.map((d) => ({ name: d._id, idle: d.at.getTime() < idleSince }));
  }

  /**
   * Stops looking at `database` if its outbox is empty and nobody named it for `forgetAfterMs`
   * (a writer names it again, at least once a minute, before it records anything).
   */
  async forgetIfIdle(database: string): Promise<void> {
    const left = await this.records(database).countDocuments(
      {},
      { limit: 1, maxTimeMS: this.#databases.queryTimeoutMs },
    );
    if (left > 0) return;
    const idleSince = new Date(this.#now() - this.#timing.forgetAfterMs);
    await this.#registry.deleteOne({ _id: database, at: { $lt: idleSince } }).exec();
  }

  /** The events of up to `limit` writes in `database` recorded before `before`, oldest first, each whole. */
  async pending(database: string, before: Date, limit: number): Promise<FeedBatch[]> {
    const timeLimit = { maxTimeMS: this.#databases.queryTimeoutMs };
    const outbox = this.records(database);
    const oldest = await outbox
      .find({ at: { $lt: before } }, { projection: { tx: 1 }, sort: { at: 1, _id: 1 }, limit, ...timeLimit })
      .toArray();
    const txs = [...new Set(oldest.map((r) => r.tx))];
    if (txs.length === 0) return [];
    const records = await outbox.find({ tx: { $in: txs } }, timeLimit).toArray();
    const byTx = Map.groupBy(records, (r) => r.tx);
    return txs.flatMap((tx) => {
      const [first, ...more] = byTx.get(tx) ?? [];
      return first ? [batchOf(database, first, ...more)] : [];
    });
  }
}
