/**
 * Building the port's row filters (store/tenant-rows.ts): the constructors simplify as they go
 * ("every row" drops out of an `and`, an `and` of one is that one), so a filter reaches the store
 * in the shape its indexes serve (store/mongo-filter.ts).
 */
import type { Condition } from "../../query/index.ts";
import type { RowFilter, RowId } from "../../store/tenant-rows.ts";

export const ALL_ROWS: RowFilter = { op: "all" };

export function byId(id: RowId): RowFilter {
  return { op: "id", id };
}

export function byIds(ids: RowId[]): RowFilter {
  return { op: "ids", ids };
}

/** Each column equal to the value in the same position. */
export function columnsEqual(columns: string[], values: unknown[]): RowFilter {
  return { op: "eq", columns, values };
}

export function columnIn(column: string, values: unknown[]): RowFilter {
  return { op: "in", column, values };
}

/** Rows every part admits; "every row" parts drop out. */
export function and(parts: RowFilter[]): RowFilter {
  const kept = parts.filter((p) => p.op !== "all");
  const [first, ...more] = kept;
  if (!first) return ALL_ROWS;
  return more.length === 0 ? first : { op: "and", items: kept };
}

/** Rows any of the alternatives admits (kept as given, even one: the store's query names them). */
export function or(alternatives: RowFilter[]): RowFilter {
  return { op: "or", items: alternatives };
}

/** A compiled filter of the filter language (query/: compileCondition); an empty query admits every row. */
export function clientFilter({ query, test }: Condition): RowFilter {
  return Object.keys(query).length === 0
    ? ALL_ROWS
    : { op: "client", filter: { dialect: "mongodb", query, test } };
}
