/**
 * Turns request parameters and role restrictions into one MongoDB query and
 * sort: client filters (filter, sysfilter — repeated ones AND together), the
 * resource's own filter, and the role's row filters; ordering with the key as
 * the final tie-breaker.
 */
import type { Document } from "mongodb";
import { errors } from "../../../../shared/errors.ts";
import {
  type AttributeSchema,
  compileFilter,
  compileOrder,
  parseFilter,
  parseOrder,
  parseSysfilter,
  parseSysorder,
} from "../query/index.ts";
import type { Permission } from "./authorization.ts";
import type { ResourceModel, TableModel } from "./project-model.ts";

export type SortSpec = [string, 1 | -1][];

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
): Document | null {
  if (!permission.rowFilters) return null;
  const schema = tableSchema(table);
  const parts = permission.rowFilters.map((text) =>
    compileFilter(parseFilter(text, "row filter"), schema, globals, { label: "row filter" }),
  );
  return parts.length === 1 ? parts[0]! : { $or: parts };
}

export function buildQuery(
  resource: ResourceModel,
  permission: Permission,
  globals: Record<string, unknown>,
  client: ClientQuery,
): Document {
  const schema = resourceSchema(resource, permission.columns);
  const parts: Document[] = [];
  for (const text of client.filters) parts.push(compileFilter(parseFilter(text), schema, globals));
  for (const text of client.sysfilters) parts.push(compileFilter(parseSysfilter(text), schema, globals));
  if (resource.filter)
    parts.push(compileFilter(parseFilter(resource.filter), resourceSchema(resource, null), globals));
  const rows = rowFilterQuery(resource.table, permission, globals);
  if (rows) parts.push(rows);
  return and(parts);
}

export function and(parts: Document[]): Document {
  const kept = parts.filter((p) => Object.keys(p).length > 0);
  if (kept.length === 0) return {};
  return kept.length === 1 ? kept[0]! : { $and: kept };
}

export function buildSort(resource: ResourceModel, permission: Permission, client: ClientQuery): SortSpec {
  const schema = resourceSchema(resource, permission.columns);
  const sort: SortSpec = [];
  const push = (pairs: SortSpec) => {
    for (const [field, dir] of pairs) if (!sort.some(([f]) => f === field)) sort.push([field, dir]);
  };
  for (const text of client.orders) push(compileOrder(parseOrder(text), schema));
  for (const text of client.sysorders) push(compileOrder(parseSysorder(text), schema));
  if (sort.length === 0 && resource.order)
    push(compileOrder(parseOrder(resource.order), resourceSchema(resource, null)));
  for (const k of resource.table.key) if (!sort.some(([f]) => f === k)) sort.push([k, 1]);
  return sort;
}

/** True when the sort is the key in ascending order: the case where keyset paging applies. */
export function isKeyOrder(table: TableModel, sort: SortSpec): boolean {
  return sort.length === table.key.length && sort.every(([f, d], i) => f === table.key[i] && d === 1);
}

/** Rows strictly after `last` in key order (lexicographic over the key columns). */
export function afterKey(table: TableModel, last: unknown[]): Document {
  if (last.length !== table.key.length)
    throw errors.malformed("The paging position does not fit this resource");
  const alternatives: Document[] = table.key.map((k, i) => {
    const clause: Document = {};
    for (let j = 0; j < i; j++) clause[table.key[j]!] = { $eq: last[j] };
    clause[k] = { $gt: last[i] };
    return clause;
  });
  return alternatives.length === 1 ? alternatives[0]! : { $or: alternatives };
}
