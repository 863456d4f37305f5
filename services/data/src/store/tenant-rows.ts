/**
 * The port between the domain and the tenant rows: what a read or a write
 * asks of the store, in the domain's terms (tables, row ids, compiled queries).
 * The MongoDB implementation (tenant-store.ts) owns the query documents' time
 * limits and turns driver errors into the project's own (mongo-errors.ts); the
 * write loop (write-loop.ts) commits a plan. Code outside store/ imports only
 * the types of this module (docs/architecture.md).
 */
import type { TenantStorage } from "./storage-names.ts";

/** A row's `_id`: its single key value, or the JSON text of a composite key's values. */
export type RowId = string | number | boolean;

/** A stored row: its columns, its `_id` and its checksum `_ck`. */
export type RowDocument = {
  _id: RowId;
  _ck: string;
  // biome-ignore lint/suspicious/noExplicitAny: a column holds whatever its type allows (domain/model/column-values.ts)
  [column: string]: any;
};

/** A compiled query document (query-builder.ts, query/translator.ts). */
export type RowQuery = Record<string, unknown>;

/** Sort order: columns with 1 (ascending) or -1 (descending), most significant first. */
export type RowSort = [string, 1 | -1][];

export interface FindOptions {
  sort?: RowSort;
  skip?: number;
  limit?: number;
}

export interface TenantRows {
  /** The row with this id, or null. */
  get(storage: TenantStorage, table: string, id: RowId): Promise<RowDocument | null>;
  find(storage: TenantStorage, table: string, query: RowQuery, options?: FindOptions): Promise<RowDocument[]>;
  /** Whether at least one row matches. */
  exists(storage: TenantStorage, table: string, query: RowQuery): Promise<boolean>;
  /** Next value of a table's generated key column. */
  nextSequence(storage: TenantStorage, table: string, column: string): Promise<number>;
}

/**
 * A store index of a table (domain/model/table-indexes.ts says which a definition asks for): its name
 * within the table (the store adds `tessera_`), its columns (ascending) and whether two rows may
 * share their values.
 */
export interface TableIndex {
  name: string;
  columns: string[];
  unique: boolean;
  origin: "key" | "foreign key" | "definition";
}

/** One row change of a plan, by table. */
export type RowWrite =
  | { kind: "insert"; table: string; after: RowDocument }
  | { kind: "update"; table: string; before: RowDocument; after: RowDocument }
  | { kind: "delete"; table: string; before: RowDocument };

/** One plan of a request: the writes to commit, and what the request answers when they are. */
export interface Planned<T> {
  writes: RowWrite[];
  value: T;
  /** The error to answer when the store refuses `write` (an insert) because its key is taken. */
  duplicate?: (write: RowWrite & { kind: "insert" }) => Error;
  /** The names of the rules that ran for the row `write` changes (for the change feed). */
  rulesOf?: (write: RowWrite) => string[];
}

/** Plans with `plan` (as often as needed) and commits: plan → lock → re-plan → commit (write-loop.ts). */
export interface WriteLoop {
  run<T>(storage: TenantStorage, plan: () => Promise<Planned<T>>): Promise<{ value: T; attempts: number }>;
}
