/**
 * The MongoDB dialect of the port's row filters (tenant-rows.ts): each filter compiles to one
 * fixed query shape. The shapes are those the store's indexes serve on MongoDB and on FerretDB
 * (docs/operations.md §FerretDB): `{_id: v}` for a row, `{_id: {$in: [...]}}` for rows, one
 * document of `$eq`s for a (foreign) key, `{c: {$in: [...]}}` for several parents, and for keyset
 * paging a range on the first column (so that an index that leads with it serves the page in
 * order) and an `$or` of "equal on the leading columns, after on the next". Change none without
 * test/unit/data/mongo-filter.test.ts and test/integration/data/ferretdb-pushdown.test.ts.
 */
import type { Document } from "mongodb";
import { equalsOperand, inOperands, satisfiesRange } from "../query/store-values.ts";
import type { RowDocument, RowFilter } from "./tenant-rows.ts";

export function toMongoFilter(filter: RowFilter): Document {
  switch (filter.op) {
    case "all":
      return {};
    case "id":
      return { _id: filter.id };
    case "ids":
      return { _id: { $in: filter.ids } };
    case "eq":
      return equalities(filter.columns, filter.values);
    case "in":
      return { [filter.column]: { $in: filter.values } };
    case "and":
      return { $and: filter.items.map(toMongoFilter) };
    case "or":
      return { $or: filter.items.map(toMongoFilter) };
    case "afterKey":
      return afterKey(keyParts(filter));
    case "client":
      return filter.filter.query;
  }
}

/** `{c1: {$eq: v1}, c2: {$eq: v2}, …}`. */
function equalities(columns: string[], values: unknown[]): Document {
  return Object.fromEntries(columns.map((c, i) => [c, { $eq: values[i] }]));
}

/** A column of an "after" position, with its direction (ascending unless given) and its value. */
interface KeyPart {
  column: string;
  direction: 1 | -1;
  value: unknown;
}

const keyParts = (filter: Extract<RowFilter, { op: "afterKey" }>): KeyPart[] =>
  filter.columns.map((column, i) => ({
    column,
    direction: filter.directions?.[i] ?? 1,
    value: filter.values[i],
  }));

/** The operator of "after" and of "at or after" in a direction. */
const after = (direction: 1 | -1) => (direction === 1 ? "$gt" : "$lt");
const atOrAfter = (direction: 1 | -1) => (direction === 1 ? "$gte" : "$lte");

/**
 * Lexicographic "after": equal on the first i columns and after on column i, for each i; with
 * more than one column, also "at or after" on the first (which each alternative implies).
 */
function afterKey(parts: KeyPart[]): Document {
  const alternatives = parts.map(({ column, direction, value }, i) => ({
    ...Object.fromEntries(parts.slice(0, i).map((p) => [p.column, { $eq: p.value }])),
    [column]: { [after(direction)]: value },
  }));
  const [first, ...more] = alternatives;
  if (first && more.length === 0) return first;
  const lead = parts
    .slice(0, 1)
    .map(({ column, direction, value }) => ({ [column]: { [atOrAfter(direction)]: value } }));
  return { $and: [...lead, { $or: alternatives }] };
}

/**
 * The filter evaluated on a row in this process, as the store evaluates the query toMongoFilter
 * makes of it (for rows that are not read from the store: the change feed's events for live views,
 * feed/live-view.ts, and for webhooks, hooks/subscription-rules.ts). Each shape is evaluated by the
 * store's rules for the operators its query uses (query/store-values.ts); a client filter by the
 * test its compile step made with its query (query/conditions.ts).
 */
export function rowMatcher(filter: RowFilter): (row: RowDocument) => boolean {
  switch (filter.op) {
    case "all":
      return () => true;
    case "id": {
      const { id } = filter;
      return (row) => equalsOperand(row._id, id);
    }
    case "ids": {
      const { ids } = filter;
      return (row) => inOperands(row._id, ids);
    }
    case "eq": {
      const { columns, values } = filter;
      return (row) => columns.every((c, i) => equalsOperand(row[c], values[i]));
    }
    case "in": {
      const { column, values } = filter;
      return (row) => inOperands(row[column], values);
    }
    case "and": {
      const items = filter.items.map(rowMatcher);
      return (row) => items.every((matches) => matches(row));
    }
    case "or": {
      const items = filter.items.map(rowMatcher);
      return (row) => items.some((matches) => matches(row));
    }
    case "afterKey": {
      const parts = keyParts(filter);
      // Equal on the first i columns and after on column i, for some i (as afterKey's query).
      return (row) =>
        parts.some(
          ({ column, direction, value }, i) =>
            satisfiesRange(row[column], after(direction), value) &&
            parts.slice(0, i).every((p) => equalsOperand(row[p.column], p.value)),
        );
    }
    case "client":
      return filter.filter.test;
  }
}
