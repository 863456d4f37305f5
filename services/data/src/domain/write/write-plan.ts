/**
 * The in-memory plan of one write request: every row it changes, in the order
 * first touched, with the row as read (for the guarded write and the undo) and
 * its final state. Rows read during planning are cached so each is read once.
 */
import { present } from "../../../../../shared/present.ts";
import { randomHex } from "../../../../../shared/random-hex.ts";
import type { RowDocument, RowFilter, RowId, RowWrite, TenantRows } from "../../store/tenant-rows.ts";
import { rowId } from "../model/column-values.ts";
import type { ProjectModel, Relationship, ResourceModel, TableModel } from "../model/project-model.ts";
import { childrenQuery } from "../read/query-builder.ts";
import { byIds } from "../read/row-filters.ts";

export type Verb = "INSERT" | "UPDATE" | "DELETE";

interface RowChangeOf {
  table: TableModel;
  /** The resource the change is reported under in the txsummary. */
  resource: ResourceModel;
  id: RowId;
}

/**
 * A row's change in the plan, by verb: an insert has no row before, an update both, a delete none
 * after. A change is not altered: a further change of the row replaces it in the plan, in its place.
 */
export type RowChange =
  | (RowChangeOf & { verb: "INSERT"; before: null; after: RowDocument })
  | (RowChangeOf & { verb: "UPDATE"; before: RowDocument; after: RowDocument })
  | (RowChangeOf & { verb: "DELETE"; before: RowDocument; after: null });

/** The row a change leaves (its row as it was, for a delete). */
export function rowOfChange(change: RowChange): RowDocument {
  return change.verb === "DELETE" ? change.before : change.after;
}

/** A rule that ran for a row (listed by `?rulesummary=true`). */
export interface FiredRule {
  name: string;
  type: string;
}

export function newChecksum(): string {
  return randomHex(8);
}

function rowKey(table: TableModel, id: RowId): string {
  return `${table.name}\u0000${JSON.stringify(id)}`;
}

export class WritePlan {
  readonly project: ProjectModel;
  readonly #store: TenantRows;
  readonly #changes = new Map<string, RowChange>();
  readonly #reads = new Map<string, RowDocument | null>();
  readonly #fired = new Map<string, FiredRule[]>();

  constructor(store: TenantRows, project: ProjectModel) {
    this.#store = store;
    this.project = project;
  }

  get changes(): RowChange[] {
    return [...this.#changes.values()];
  }

  /** The row as this request currently sees it: its planned state, else the stored one (read once). */
  async current(table: TableModel, id: RowId): Promise<RowDocument | null> {
    const k = rowKey(table, id);
    const change = this.#changes.get(k);
    if (change) return change.after;
    if (!this.#reads.has(k)) {
      const doc = await this.#store.get(this.project.storage, table.name, id);
      this.#reads.set(k, doc);
    }
    return this.#reads.get(k) ?? null;
  }

  /**
   * The row with this id if the request already knows it (planned, or read before), without
   * asking the store. A plain insert relies on this and on the store's unique key: a row the
   * request does not know about makes the commit fail with a duplicate key (docs/architecture.md).
   */
  known(table: TableModel, id: RowId): RowDocument | null {
    const k = rowKey(table, id);
    const change = this.#changes.get(k);
    if (change) return change.after;
    return this.#reads.get(k) ?? null;
  }

  /**
   * Reads, with one query, the rows of `ids` this request has neither planned
   * nor read yet, so that `current` answers them without reading.
   */
  async prefetch(table: TableModel, ids: Iterable<RowId>): Promise<void> {
    const missing = [...new Set(ids)].filter((id) => {
      const k = rowKey(table, id);
      return !this.#changes.has(k) && !this.#reads.has(k);
    });
    if (missing.length === 0) return;
    if (missing.length === 1) {
      await this.current(table, present(missing[0], "the one missing id"));
      return;
    }
    const docs = await this.findStored(table, byIds(missing));
    const found = new Set(docs.map((d) => rowKey(table, d._id)));
    for (const id of missing) if (!found.has(rowKey(table, id))) this.#reads.set(rowKey(table, id), null);
  }

  /** Remembers rows found by a query, so later lookups by id do not read them again. */
  remember(table: TableModel, doc: RowDocument): void {
    const k = rowKey(table, doc._id);
    if (!this.#changes.has(k) && !this.#reads.has(k)) this.#reads.set(k, doc);
  }

  planned(table: TableModel, id: RowId): RowChange | undefined {
    return this.#changes.get(rowKey(table, id));
  }

  /** Records the row's change (the first one, or one that replaces its earlier change, in its place). */
  #record(change: RowChange): RowChange {
    this.#changes.set(rowKey(change.table, change.id), change);
    return change;
  }

  insert(resource: ResourceModel, doc: RowDocument): RowChange {
    const existing = this.#changes.get(rowKey(resource.table, doc._id));
    // Deleted then inserted again in one request: an update of the stored row.
    if (existing?.verb === "DELETE")
      return this.#record({ ...existing, verb: "UPDATE", before: existing.before, after: doc });
    return this.#record({
      table: resource.table,
      resource,
      id: doc._id,
      verb: "INSERT",
      before: null,
      after: doc,
    });
  }

  /** Records a new state of a row; keeps INSERT for rows this request inserted. */
  update(resource: ResourceModel, before: RowDocument, after: RowDocument): RowChange {
    const existing = this.#changes.get(rowKey(resource.table, before._id));
    if (existing?.verb === "INSERT" || existing?.verb === "UPDATE")
      return this.#record({ ...existing, after });
    // Deleted by this request: it stays deleted (the plan deletes it whatever came after).
    if (existing) return existing;
    return this.#record({ table: resource.table, resource, id: before._id, verb: "UPDATE", before, after });
  }

  /** Records the row's deletion; undefined when the request inserted it (the insert is dropped). */
  delete(resource: ResourceModel, before: RowDocument): RowChange | undefined {
    const k = rowKey(resource.table, before._id);
    const existing = this.#changes.get(k);
    if (existing?.verb === "INSERT") {
      this.#changes.delete(k);
      return undefined;
    }
    if (existing) return this.#record({ ...existing, verb: "DELETE", after: null });
    return this.#record({
      table: resource.table,
      resource,
      id: before._id,
      verb: "DELETE",
      before,
      after: null,
    });
  }

  /** Changed rows of one table, in first-touch order. */
  changesOf(table: TableModel): RowChange[] {
    return this.changes.filter((c) => c.table.name === table.name);
  }

  /** Rows of `table` as stored before this request that match `filter` (remembered, so later reads are free). */
  async findStored(table: TableModel, filter: RowFilter): Promise<RowDocument[]> {
    const docs = await this.#store.find(this.project.storage, table.name, filter);
    for (const d of docs) this.remember(table, d);
    return docs;
  }

  /**
   * The children of `parent` through `rel` as this request sees them: stored
   * children that still point to it, plus rows the request moved to it or
   * inserted under it. One query.
   */
  async childrenOf(rel: Relationship, parent: RowDocument): Promise<RowDocument[]> {
    const child = present(this.project.tables.get(rel.childTable), `table '${rel.childTable}'`);
    const parentTable = present(this.project.tables.get(rel.parentTable), `table '${rel.parentTable}'`);
    const parentId = rowId(parentTable, parent);
    const stored = await this.findStored(child, childrenQuery(rel, parent));
    const out = new Map<string, RowDocument>();
    for (const d of stored) {
      const now = await this.current(child, d._id);
      if (now && parentIdOf(parentTable, rel, now) === parentId) out.set(rowKey(child, d._id), now);
    }
    for (const c of this.changesOf(child)) {
      if (c.after && parentIdOf(parentTable, rel, c.after) === parentId)
        out.set(rowKey(child, c.id), c.after);
    }
    return [...out.values()];
  }

  /** Next value of a table's generated key (rules insert rows too). */
  nextSequence(table: TableModel): Promise<number> {
    return this.#store.nextSequence(
      this.project.storage,
      table.name,
      present(table.generatedColumn, `the generated column of '${table.name}'`),
    );
  }

  /** Records that a rule ran for a row. */
  noteRule(table: TableModel, id: RowId, rule: FiredRule): void {
    const k = rowKey(table, id);
    let list = this.#fired.get(k);
    if (!list) {
      list = [];
      this.#fired.set(k, list);
    }
    if (!list.some((r) => r.name === rule.name)) list.push(rule);
  }

  /** The rules that ran for a changed row, in the order they first ran. */
  rulesOf(change: RowChange): FiredRule[] {
    return this.#fired.get(rowKey(change.table, change.id)) ?? [];
  }

  /** The row writes that carry out the plan (each guarded by the row's checksum as read). */
  writes(): RowWrite[] {
    return this.changes.flatMap((c): RowWrite[] => {
      const table = c.table.name;
      if (c.verb === "INSERT") return [{ kind: "insert", table, after: c.after }];
      if (c.verb === "UPDATE") return [{ kind: "update", table, before: c.before, after: c.after }];
      return [{ kind: "delete", table, before: c.before }];
    });
  }
}

/** The `_id` of the parent a row points to through `rel`, or null when its foreign key is (partly) null. */
export function parentIdOf(
  parentTable: TableModel,
  rel: Relationship,
  row: Record<string, unknown>,
): RowId | null {
  const values = rel.childColumns.map((c) => row[c]);
  if (values.some((v) => v === undefined || v === null)) return null;
  return rowId(parentTable, Object.fromEntries(rel.parentColumns.map((c, i) => [c, values[i]])));
}
