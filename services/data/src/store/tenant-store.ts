/**
 * Tenant data: one MongoDB database per account (so accounts never share a
 * collection), one collection per project table, per-table sequences for
 * generated keys. Every query carries a time limit (maxTimeMS).
 */
import { createHash } from "node:crypto";
import type { ClientSession, Collection, Db, Document, MongoClient } from "mongodb";

/** A row's `_id`: its single key value, or the JSON text of a composite key's values. */
export type RowId = string | number | boolean;
export type RowDocument = Document & { _id: RowId; _ck: string };

export class TenantStore {
  readonly #client: MongoClient;
  readonly #prefix: string;
  readonly queryTimeoutMs: number;
  #transactions: Promise<boolean> | undefined;

  constructor(client: MongoClient, prefix: string, queryTimeoutMs: number) {
    this.#client = client;
    this.#prefix = prefix;
    this.queryTimeoutMs = queryTimeoutMs;
  }

  /** Database name for an account: readable, case-folded, with a hash so `Acme` and `acme` never collide. */
  databaseName(account: string): string {
    const hash = createHash("sha256").update(account).digest("hex").slice(0, 8);
    const readable = account
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, "_")
      .slice(0, 30);
    return `${this.#prefix}${readable}_${hash}`;
  }

  db(account: string): Db {
    return this.#client.db(this.databaseName(account));
  }

  rows(account: string, project: string, table: string): Collection<RowDocument> {
    return this.db(account).collection<RowDocument>(`${project}.${table}`);
  }

  /** Next value of a table's generated key (gaps are possible after failed requests, as with SQL sequences). */
  async nextSequence(
    account: string,
    project: string,
    table: string,
    session?: ClientSession,
  ): Promise<number> {
    const seq = await this.db(account)
      .collection<{ _id: string; value: number }>("tessera_sequences")
      .findOneAndUpdate(
        { _id: `${project}.${table}` },
        { $inc: { value: 1 } },
        { upsert: true, returnDocument: "after", maxTimeMS: this.queryTimeoutMs, session },
      );
    return seq!.value;
  }

  /** Drops every collection of a project (its tables and its sequences). */
  async dropProject(account: string, project: string): Promise<void> {
    const db = this.db(account);
    const collections = await db.listCollections({}, { nameOnly: true }).toArray();
    for (const c of collections) {
      if (c.name.startsWith(`${project}.`)) await db.dropCollection(c.name);
    }
    await db
      .collection("tessera_sequences")
      .deleteMany({ _id: { $regex: `^${escapeRegex(project)}\\.` } } as Document);
  }

  async dropAccount(account: string): Promise<void> {
    await this.db(account).dropDatabase();
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

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
