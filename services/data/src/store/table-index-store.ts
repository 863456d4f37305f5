/**
 * The indexes of a project's tables in the store (domain/model/table-indexes.ts says
 * which): made when a definition is applied and when a process first compiles a
 * revision (so projects stored before keep up), in the background; Tessera's
 * indexes (`tessera_*`) that the definition no longer asks for are dropped once the table's
 * wanted ones are made (an index whose shape changed is replaced without a gap).
 * Making an index that exists changes nothing, so every process may do it. Each
 * index's state is what the store lists, else what this process saw happen.
 */
import type { Logger } from "../../../../shared/logger.ts";
import { isDuplicateKey } from "./mongo-errors.ts";
import { SeenOnce } from "./seen-once.ts";
import { collectionName, type TenantStorage } from "./storage-names.ts";
import type { TenantDatabases } from "./tenant-databases.ts";
import type { TableIndex } from "./tenant-rows.ts";

/** Every index Tessera makes is named with this prefix; others on a collection are left alone. */
export const INDEX_PREFIX = "tessera_";

/** `ready`: in the store; `building`: being made; `failed`: could not be made (see `error`); `pending`: not yet. */
export type IndexState = "ready" | "building" | "failed" | "pending";

export interface IndexStatus extends TableIndex {
  table: string;
  state: IndexState;
  error?: string;
}

type Attempt = { state: "building" } | { state: "failed"; error: string };

/** Memory for the revisions whose indexes this process applied (about 200 bytes each). */
const APPLIED_REVISIONS_BYTES = 8 * 1024 * 1024;

/** A revision of a project: where its rows live, its incarnation and its number. */
export interface ProjectRevision {
  storage: TenantStorage;
  uid: string;
  revision: number;
}

export class TableIndexStore {
  readonly #tenants: TenantDatabases;
  readonly #logger: Logger;
  /** What this process saw of the indexes it made that are not in the store (yet), by collection and name. */
  readonly #attempts = new Map<string, Attempt>();
  /** The revisions whose indexes this process applied, the most recent within a memory budget. */
  readonly #applied = new SeenOnce(APPLIED_REVISIONS_BYTES);

  constructor(tenants: TenantDatabases, logger: Logger) {
    this.#tenants = tenants;
    this.#logger = logger;
  }

  /**
   * `apply` once per revision of a project and process (`always`: again): a project used again
   * after its model was evicted, or a revision this process stored, costs nothing more.
   */
  async applyRevision(
    project: ProjectRevision,
    wanted: Map<string, TableIndex[]>,
    options: { always?: boolean } = {},
  ): Promise<void> {
    const { storage, uid, revision } = project;
    const first = this.#applied.first(`${storage.database}/${storage.collectionPrefix}@${uid}/${revision}`);
    if (first || options.always) await this.apply(storage, wanted);
  }

  /** Makes the wanted indexes and drops Tessera's others; never throws (failures are each index's state). */
  async apply(storage: TenantStorage, wanted: Map<string, TableIndex[]>): Promise<void> {
    try {
      const db = this.#tenants.db(storage.database);
      const existing = await this.#collections(storage);
      for (const [table, indexes] of wanted) {
        const collection = collectionName(storage, table);
        const keep = new Set(indexes.map((i) => INDEX_PREFIX + i.name));
        for (const index of indexes) await this.#make(storage, collection, index);
        // An index the definition no longer asks for goes once the wanted ones are made (or failed).
        if (existing.includes(collection)) {
          for (const name of await this.#indexNames(storage, collection)) {
            if (name.startsWith(INDEX_PREFIX) && !keep.has(name))
              await db.collection(collection).dropIndex(name);
          }
        }
      }
      for (const collection of existing) {
        const table = collection.slice(storage.collectionPrefix.length);
        if (wanted.has(table)) continue;
        for (const name of await this.#indexNames(storage, collection)) {
          if (name.startsWith(INDEX_PREFIX)) await db.collection(collection).dropIndex(name);
        }
      }
    } catch (err) {
      this.#logger.warn(
        { err, database: storage.database },
        "could not bring the tables' indexes up to date",
      );
    }
  }

  /** Each wanted index with its state. */
  async status(storage: TenantStorage, wanted: Map<string, TableIndex[]>): Promise<IndexStatus[]> {
    const existing = await this.#collections(storage);
    const result: IndexStatus[] = [];
    for (const [table, indexes] of wanted) {
      const collection = collectionName(storage, table);
      const present = existing.includes(collection)
        ? new Set(await this.#indexNames(storage, collection))
        : new Set<string>();
      for (const index of indexes) {
        const attempt = this.#attempts.get(`${storage.database}/${collection}/${index.name}`);
        if (present.has(INDEX_PREFIX + index.name)) result.push({ table, ...index, state: "ready" });
        else if (attempt) result.push({ table, ...index, ...attempt });
        else result.push({ table, ...index, state: "pending" });
      }
    }
    return result;
  }

  async #make(storage: TenantStorage, collection: string, index: TableIndex): Promise<void> {
    const key = `${storage.database}/${collection}/${index.name}`;
    this.#attempts.set(key, { state: "building" });
    try {
      await this.#tenants
        .db(storage.database)
        .collection(collection)
        .createIndex(Object.fromEntries(index.columns.map((c) => [c, 1])), {
          name: INDEX_PREFIX + index.name,
          unique: index.unique,
        });
      this.#attempts.delete(key);
    } catch (err) {
      const error = isDuplicateKey(err)
        ? `rows of the table share values of (${index.columns.join(", ")}): make them unique, then apply the definition again`
        : String((err as Error).message ?? err);
      this.#attempts.set(key, { state: "failed", error });
      this.#logger.warn({ err, collection, index: index.name }, "could not make an index");
    }
  }

  async #collections(storage: TenantStorage): Promise<string[]> {
    const list = await this.#tenants
      .db(storage.database)
      .listCollections({}, { nameOnly: true, maxTimeMS: this.#tenants.queryTimeoutMs })
      .toArray();
    return list.map((c) => c.name).filter((name) => name.startsWith(storage.collectionPrefix));
  }

  async #indexNames(storage: TenantStorage, collection: string): Promise<string[]> {
    const indexes = await this.#tenants.db(storage.database).collection(collection).listIndexes().toArray();
    return indexes.map((i) => String(i.name));
  }
}
