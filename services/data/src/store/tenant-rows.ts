/**
 * The port between the domain and the tenant rows: what a read or a write
 * asks of the store, in the domain's terms (tables, row ids, row filters).
 * The MongoDB implementation (tenant-store.ts) compiles each RowFilter to its
 * query document (mongo-filter.ts), gives every query its time limit and turns
 * driver errors into the project's own (mongo-errors.ts); the write loop
 * (write-loop.ts) commits a plan. Code outside store/ imports only the types
 * of this module (docs/architecture.md).
 */
import type { MongoQuery, RowTest } from "../query/index.ts";
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

/**
 * Which rows a read asks for. The domain builds these (domain/row-filters.ts); the adapter
 * compiles them to its store's dialect (mongo-filter.ts), each to one fixed shape, so the
 * store's indexes serve them. Columns are stored column names; `_id` is the row id.
 */
export type RowFilter =
  /** Every row. */
  | { op: "all" }
  /** The row with this id. */
  | { op: "id"; id: RowId }
  /** The rows with any of these ids. */
  | { op: "ids"; ids: RowId[] }
  /** Each column equal to the value in the same position (SQL's `=`: never a null). */
  | { op: "eq"; columns: string[]; values: unknown[] }
  /** The column equal to one of the values. */
  | { op: "in"; column: string; values: unknown[] }
  | { op: "and"; items: RowFilter[] }
  | { op: "or"; items: RowFilter[] }
  /**
   * Rows strictly after `values` in the order of `columns` (keyset paging): each column ascending,
   * or as `directions` says (1 ascending, -1 descending).
   */
  | { op: "afterKey"; columns: string[]; values: unknown[]; directions?: (1 | -1)[] }
  /** A client's filter, a resource's filter or a row filter, compiled by the filter language (query/). */
  | { op: "client"; filter: ClientFilter };

/**
 * A filter of the filter language (docs/filters.md) as query/translator.ts compiles it: already in
 * the store's dialect (a MongoDB query of allow-listed operators, with SQL's three-valued logic
 * worked out), which only the adapter reads, and the same condition as a test of a row in this
 * process, made by the same compile step (query/conditions.ts), which the row matcher uses.
 */
export type ClientFilter = { dialect: "mongodb"; query: MongoQuery; test: RowTest };

/** Sort order: columns with 1 (ascending) or -1 (descending), most significant first. */
export type RowSort = [string, 1 | -1][];

export interface FindOptions {
  sort?: RowSort;
  skip?: number;
  limit?: number;
}

/**
 * Reads of a project's rows. A store that is away or a query past its time limit fails with
 * the service's ApiError (503/5031), never a driver error.
 */
export interface TenantRows {
  /** The row with this id, or null. */
  get(storage: TenantStorage, table: string, id: RowId): Promise<RowDocument | null>;
  find(
    storage: TenantStorage,
    table: string,
    filter: RowFilter,
    options?: FindOptions,
  ): Promise<RowDocument[]>;
  /** Whether at least one row matches. */
  exists(storage: TenantStorage, table: string, filter: RowFilter): Promise<boolean>;
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

/** The limits of the account's plan a write is held to (docs/tenants.md#quotas). */
export interface WriteQuota {
  plan: string;
  /** Rows one table may hold; null: no limit. */
  rowsPerTable: number | null;
  /** The account's stored bytes as last measured reached its limit: only deletes are written. */
  storageFull?: { used: number; limit: number };
}

/** Plans with `plan` (as often as needed) and commits: plan → lock → re-plan → commit (write-loop.ts). */
export interface WriteLoop {
  run<T>(
    storage: TenantStorage,
    plan: () => Promise<Planned<T>>,
    quota?: WriteQuota,
  ): Promise<{ value: T; attempts: number }>;
}
