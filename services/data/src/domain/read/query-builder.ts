/**
 * Turns request parameters and role restrictions into one row filter (the
 * store's port, row-filters.ts) and sort: client filters (filter, sysfilter — repeated ones AND together), the
 * resource's own filter, and the role's row filters; ordering with the key as
 * the final tie-breaker.
 */

import { errors } from "../../../../../shared/errors.ts";
import {
  type AttributeSchema,
  compileCondition,
  compileOrder,
  parseFilter,
  parseOrder,
  parseSysfilter,
  parseSysorder,
} from "../../query/index.ts";
import type { RowDocument, RowFilter } from "../../store/tenant-rows.ts";
import { distinctByJson } from "../model/column-values.ts";
import type { Relationship, ResourceModel, TableModel } from "../model/project-model.ts";
import type { Permission } from "./authorization.ts";
import { and, clientFilter, columnIn, columnsEqual, or } from "./row-filters.ts";

export type SortSpec = [string, 1 | -1][];

/**
 * What a project definition writes once — row filters, a resource's filter and order, and the
 * schemas they are checked against — is parsed once per project model (a model is one revision of
 * a project) and kept with the table or resource it belongs to. Only the globals a key binds into
 * a filter differ per request, so only that last step runs every time.
 */
const definitionParts = new WeakMap<TableModel | ResourceModel, Map<string, unknown>>();

function once<T>(owner: TableModel | ResourceModel, part: string, make: () => T): T {
  let parts = definitionParts.get(owner);
  if (!parts) {
    parts = new Map();
    definitionParts.set(owner, parts);
  }
  if (!parts.has(part)) parts.set(part, make());
  return parts.get(part) as T;
}

export interface ClientQuery {
  filters: string[];
  sysfilters: string[];
  orders: string[];
  sysorders: string[];
}

export function resourceSchema(resource: ResourceModel, visible: Set<string> | null): AttributeSchema {
  const schema: AttributeSchema = {};
  for (const attr of resource.attributes) {
    if (visible && !visible.has(attr.column.name)) continue;
    schema[attr.name] = { field: attr.column.name, type: attr.column.type };
  }
  return schema;
}

/** Every attribute of the resource: what its own filter and order may name. */
function definedSchema(resource: ResourceModel): AttributeSchema {
  return once(resource, "schema", () => resourceSchema(resource, null));
}

export function tableSchema(table: TableModel): AttributeSchema {
  const schema: AttributeSchema = {};
  for (const c of table.columns.values()) schema[c.name] = { field: c.name, type: c.type };
  return schema;
}

/** The row-level security part: rows one of the granting roles' filters admits. */
export function rowFilterQuery(
  table: TableModel,
  permission: Permission,
  globals: Record<string, unknown>,
): RowFilter | null {
  if (!permission.rowFilters) return null;
  const schema = once(table, "schema", () => tableSchema(table));
  const parts = permission.rowFilters.map((text) =>
    clientFilter(
      compileCondition(
        once(table, `row filter ${text}`, () => parseFilter(text, "row filter")),
        schema,
        globals,
        { label: "row filter" },
      ),
    ),
  );
  const [only] = parts;
  return parts.length === 1 && only ? only : or(parts);
}

export function buildQuery(
  resource: ResourceModel,
  permission: Permission,
  globals: Record<string, unknown>,
  client: ClientQuery,
): RowFilter {
  const schema = resourceSchema(resource, permission.columns);
  const parts: RowFilter[] = [];
  for (const text of client.filters)
    parts.push(clientFilter(compileCondition(parseFilter(text), schema, globals)));
  for (const text of client.sysfilters)
    parts.push(clientFilter(compileCondition(parseSysfilter(text), schema, globals)));
  const filter = resource.filter;
  if (filter) {
    const parsed = once(resource, "filter", () => parseFilter(filter));
    parts.push(clientFilter(compileCondition(parsed, definedSchema(resource), globals)));
  }
  const rows = rowFilterQuery(resource.table, permission, globals);
  if (rows) parts.push(rows);
  return and(parts);
}

/** The children of one parent row through `rel`: each foreign-key column equal to the parent's key column. */
export function childrenQuery(rel: Relationship, parent: Record<string, unknown>): RowFilter {
  return columnsEqual(
    rel.childColumns,
    rel.parentColumns.map((c) => parent[c]),
  );
}

/**
 * The children of any of several parents through `rel`, given the parents' key tuples (values of
 * `rel.parentColumns`): one of the values on a one-column foreign key, else one alternative per
 * parent. Repeated tuples are asked for once.
 */
export function childrenOfAnyQuery(rel: Relationship, parentKeys: unknown[][]): RowFilter {
  const tuples = distinctByJson(parentKeys);
  const [only] = rel.childColumns;
  if (rel.childColumns.length === 1 && only !== undefined)
    return columnIn(
      only,
      tuples.map((t) => t[0]),
    );
  return or(tuples.map((t) => columnsEqual(rel.childColumns, t)));
}

export function buildSort(resource: ResourceModel, permission: Permission, client: ClientQuery): SortSpec {
  const schema = resourceSchema(resource, permission.columns);
  const sort: SortSpec = [];
  const push = (pairs: SortSpec) => {
    for (const [field, dir] of pairs) if (!sort.some(([f]) => f === field)) sort.push([field, dir]);
  };
  for (const text of client.orders) push(compileOrder(parseOrder(text), schema));
  for (const text of client.sysorders) push(compileOrder(parseSysorder(text), schema));
  const order = resource.order;
  if (sort.length === 0 && order)
    push(once(resource, "order", () => compileOrder(parseOrder(order), definedSchema(resource))));
  for (const k of resource.table.key) if (!sort.some(([f]) => f === k)) sort.push([k, 1]);
  return sort;
}

/**
 * Whether pages in this order go by a keyset (the last row's values of the sort's columns) rather
 * than by skipping rows: when every column of the sort is a key column or a required one that is
 * not `json` (a value of one type in every row, compared by the store as it sorts). A sort always
 * ends with the key (buildSort), so the position is one row.
 */
export function isKeysetOrder(table: TableModel, sort: SortSpec): boolean {
  return sort.every(([f]) => {
    if (table.key.includes(f)) return true;
    const column = table.columns.get(f);
    return column?.required === true && column.type !== "json";
  });
}

/** Where the next page starts when keyset paging applies (the last row's values of the sort's columns), else undefined. */
export function pagekeyAfter(table: TableModel, sort: SortSpec, last: RowDocument): unknown[] | undefined {
  return isKeysetOrder(table, sort) ? sort.map(([f]) => last[f]) : undefined;
}

/** Rows strictly after `last` (the values of the sort's columns) in the sort's order. */
export function afterKey(sort: SortSpec, last: unknown[]): RowFilter {
  if (last.length !== sort.length || last.some((v) => v === null || v === undefined))
    throw errors.malformed("The paging position does not fit this resource");
  return {
    op: "afterKey",
    columns: sort.map(([f]) => f),
    values: last,
    ...(sort.some(([, d]) => d === -1) ? { directions: sort.map(([, d]) => d) } : {}),
  };
}
