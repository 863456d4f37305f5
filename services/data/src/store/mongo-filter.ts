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
      return afterKey(filter.columns, filter.values, directionsOf(filter));
    case "client":
      return filter.filter.query;
  }
}

/** `{c1: {$eq: v1}, c2: {$eq: v2}, …}`. */
function equalities(columns: string[], values: unknown[]): Document {
  return Object.fromEntries(columns.map((c, i) => [c, { $eq: values[i] }]));
}

const directionsOf = (filter: { columns: string[]; directions?: (1 | -1)[] }): (1 | -1)[] =>
  filter.directions ?? filter.columns.map(() => 1);

/** The operator of "after" and of "at or after" in a direction. */
const after = (direction: 1 | -1) => (direction === 1 ? "$gt" : "$lt");
const atOrAfter = (direction: 1 | -1) => (direction === 1 ? "$gte" : "$lte");

/**
 * Lexicographic "after": equal on the first i columns and after on column i, for each i; with
 * more than one column, also "at or after" on the first (which each alternative implies).
 */
function afterKey(columns: string[], values: unknown[], directions: (1 | -1)[]): Document {
  const alternatives = columns.map((c, i) => ({
    ...equalities(columns.slice(0, i), values.slice(0, i)),
    [c]: { [after(directions[i]!)]: values[i] },
  }));
  const [first, ...more] = alternatives;
  if (first && more.length === 0) return first;
  return { $and: [{ [columns[0]!]: { [atOrAfter(directions[0]!)]: values[0] } }, { $or: alternatives }] };
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
      const { columns, values } = filter;
      const directions = directionsOf(filter);
      // Equal on the first i columns and after on column i, for some i (as afterKey's query).
      return (row) =>
        columns.some(
          (c, i) =>
            satisfiesRange(row[c], after(directions[i]!), values[i]) &&
            columns.slice(0, i).every((d, j) => equalsOperand(row[d], values[j])),
        );
    }
    case "client":
      return filter.filter.test;
  }
}
