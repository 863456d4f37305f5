/**
 * The audit trail, in META_DB (collection `audit`): one entry per admin change,
 * appended and never changed. Entries carry the account's name and incarnation,
 * so an account's own listing shows its current incarnation only while the
 * operator can still read those of deleted ones.
 *
 * Entry ids are one platform-wide sequence (`e` and 16 digits, so they sort as
 * strings, after the time-based ids of earlier versions), and an entry becomes
 * visible only after every entry with a smaller id: a reader that has seen id X
 * never later finds a new entry below X, so tailing with `since=<last id>`
 * misses nothing. This needs no transactions and no atomic update in the store
 * (FerretDB has neither), only the unique `_id`:
 * - a writer inserts its entry as the successor of the head: the last number
 *   known to be stored, kept in Redis (raised, never lowered, after each
 *   insert; read from the collection when Redis has none);
 * - when that id is taken (duplicate key), the entry holding it is visible, so
 *   the writer tries the next one (after a run of collisions it reads the
 *   largest id from the collection instead).
 * So an insert of N begins only once N-1 was visible (the head, or a collision),
 * and two inserts never share an id: when N is visible, so is every id below
 * it, whichever process wrote it and however late an insert lands. The head
 * only saves look-ups of the end (a scan on FerretDB); it always names an id
 * that was stored. Each process writes its entries one at a time, in the order
 * they were reported, so its own writers never collide; processes of one
 * deployment collide only with each other, and each collision means another
 * entry was stored. (Ids never go back: prune old entries, never all of them;
 * operations.md.)
 *
 * Readers stop at a watermark: a page first reads the largest id M and lists
 * only ids up to M, all of which were visible before M was — so even a query
 * that does not read one snapshot (MongoDB yields) sees every one of them.
 */
import type { Connection, Model } from "mongoose";
import type { AuditReport } from "../../../../shared/admin-access/audit.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { auditHeadKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";
import { type ActorFilter, actorCondition } from "./actor-filter.ts";
import { metaModel } from "./meta-model.ts";
import { isDuplicateKey } from "./mongo-errors.ts";

/** An entry: a report (shared/admin-access/audit.ts) with when it was stored and its account's incarnation. */
export type AuditDoc = Omit<AuditReport, "account" | "accountUid"> & {
  _id: string;
  at: Date;
  /** null for platform-wide changes. */
  account: string | null;
  /** null when the account did not exist (a refused change). */
  accountUid: string | null;
};

type NewEntry = Omit<AuditDoc, "_id" | "at">;

/** An entry's id: its place in the platform-wide sequence (1, 2, …). */
export function auditId(sequence: number): string {
  return `e${String(sequence).padStart(16, "0")}`;
}

const SEQUENCE_ID = /^e\d{16}$/;
/** Ids of entries stored before the sequence (the millisecond, then random digits); they sort before it. */
const TIME_ID = /^\d{13}-[0-9a-f]{12}$/;

/** Whether `text` is an entry's id (either form). */
export function isAuditId(text: string): boolean {
  return SEQUENCE_ID.test(text) || TIME_ID.test(text);
}

/** Where a page starts: after an entry's id, or at the first entry stored at or after a time. */
export type AuditCursor = { after: string } | { from: Date };

/** Which entries a listing shows. */
export interface AuditFilter {
  account?: string;
  accountUid?: string;
  /** Whose changes. */
  by?: ActorFilter;
  /** A pattern the entry's path matches (letter case aside). */
  pathPattern?: string;
  /** Only refused changes (status 400 or more), or only accepted ones. */
  refused?: boolean;
}

/** A page's bounds and order: entries from `cursor` on, below `before` (an id) if given. */
export interface AuditRange {
  cursor: AuditCursor;
  before?: string;
  newestFirst?: boolean;
}

const RAISE_HEAD = `
if tonumber(ARGV[1]) > tonumber(redis.call('GET', KEYS[1]) or '0') then redis.call('SET', KEYS[1], ARGV[1]) end
return 0`;

/** Collisions in a row before a writer reads where the sequence ends instead of trying the next id. */
const MAX_STEPS = 16;

export class AuditStore {
  readonly entries: Model<AuditDoc>;
  readonly #now: () => number;
  readonly #redis: RedisClient;
  readonly #headKey: string;
  readonly #raiseHead: Script;
  /** This process's appends, one at a time in report order. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Inserts that failed so far (other than by a taken id). */
  #failures = 0;

  constructor(
    connection: Connection,
    queryTimeoutMs: number,
    redis: { client: RedisClient; prefix: string },
    now: () => number = Date.now,
  ) {
    this.#now = now;
    this.#redis = redis.client;
    this.#headKey = auditHeadKey(redis.prefix);
    this.#raiseHead = defineScript(redis.client, "auditRaiseHead", RAISE_HEAD);
    this.entries = metaModel<AuditDoc>(
      connection,
      queryTimeoutMs,
      {
        name: "AuditEntry",
        collection: "audit",
        indexes: [
          { accountUid: 1, _id: 1 },
          { account: 1, _id: 1 },
        ],
      },
      {
        _id: String,
        at: Date,
        account: String,
        accountUid: String,
        actor: Object,
        method: String,
        path: String,
        summary: String,
        status: Number,
        errorCode: Number,
        requestId: String,
        clientRequestId: String,
      },
    );
  }

  /** Stores an entry under the next id of the sequence (see the module's comment). */
  append(entry: NewEntry): Promise<void> {
    const failures = this.#failures;
    const appended = this.#queue.then(async () => {
      // Entries that waited behind a failed insert fail with it rather than each wait out the store.
      if (this.#failures !== failures) throw new Error("The audit store failed while the entry waited");
      try {
        await this.#insert({ at: new Date(this.#now()), ...entry });
      } catch (err) {
        this.#failures += 1;
        throw err;
      }
    });
    this.#queue = appended.catch(() => {});
    return appended;
  }

  async #insert(entry: Omit<AuditDoc, "_id">): Promise<void> {
    let sequence = (await this.#head()) + 1;
    for (let taken = 0; ; ) {
      try {
        await this.entries.create({ _id: auditId(sequence), ...entry });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // Taken by another process, so visible: its successor may be free.
        taken += 1;
        sequence = taken % MAX_STEPS === 0 ? (await this.#lastSequence()) + 1 : sequence + 1;
        continue;
      }
      // Best effort: a head left behind costs the next writer a collision, nothing more.
      await this.#raiseHead(1, this.#headKey, sequence).catch(() => {});
      return;
    }
  }

  /** The last sequence number known to be stored: Redis's head, else the collection's end. */
  async #head(): Promise<number> {
    const head = await this.#redis.get(this.#headKey).catch(() => null);
    return head === null ? this.#lastSequence() : Number(head);
  }

  /** The largest sequence number stored (0 when none is). */
  async #lastSequence(): Promise<number> {
    const last = await this.#lastId();
    return last !== undefined && SEQUENCE_ID.test(last) ? Number(last.slice(1)) : 0;
  }

  /** The largest id stored, of either form. */
  async #lastId(): Promise<string | undefined> {
    const last = await this.entries.findOne({}, { _id: 1 }).sort({ _id: -1 }).lean<{ _id: string }>().exec();
    return last?._id;
  }

  /**
   * Entries matching `filter` in `range`, oldest first (or newest first), at most
   * `limit`, up to the watermark.
   */
  async page(filter: AuditFilter, range: AuditRange, limit: number): Promise<AuditDoc[]> {
    const watermark = await this.#lastId();
    if (watermark === undefined) return [];
    const { cursor } = range;
    const lower = "after" in cursor ? { $gt: cursor.after } : await this.#firstFrom(cursor.from);
    if (lower === undefined) return [];
    const ids = { ...lower, $lte: watermark, ...(range.before === undefined ? {} : { $lt: range.before }) };
    const { by, pathPattern, refused, ...owner } = filter;
    return this.entries
      .find({
        ...owner,
        ...actorCondition("actor", by),
        ...(pathPattern === undefined ? {} : { path: { $regex: pathPattern, $options: "i" } }),
        ...(refused === undefined ? {} : { status: refused ? { $gte: 400 } : { $lt: 400 } }),
        _id: ids,
      })
      .sort({ _id: range.newestFirst ? -1 : 1 })
      .limit(limit)
      .lean<AuditDoc[]>()
      .exec();
  }

  /** The id range from the first entry stored at or after `from` (undefined: none was). */
  async #firstFrom(from: Date): Promise<{ $gte: string } | undefined> {
    const first = await this.entries
      .findOne({ at: { $gte: from } }, { _id: 1 })
      .sort({ _id: 1 })
      .lean<{ _id: string }>()
      .exec();
    return first ? { $gte: first._id } : undefined;
  }
}
