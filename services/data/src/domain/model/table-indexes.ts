/**
 * The store indexes a project definition asks for, per table, each shaped for the queries it
 * serves (equality, then sort, then range, as MongoDB's planner uses them):
 * - the key: GET by key, the default (key) order, keyset pages (`next_batch`);
 * - every relationship's foreign-key columns, then the key: a parent's children in key order
 *   (nested reads, `parent`, rule aggregates, delete checks), a page of them and the next;
 * - the table's own `indexes` (filters and orders an app uses), then the key: equality on the
 *   leading columns in key order with keyset paging, and an order on the columns (the key breaks
 *   ties, so pages of that order go by a keyset too). A `unique` index keeps its columns as
 *   declared: it refuses a second row with the same values.
 * An index whose columns begin another one's is left out (the longer one serves it), unless it is
 * unique. Names are made from the columns, so the same index keeps its name across revisions and
 * applying a definition again changes nothing; an index whose shape changes gets a new name (made
 * before the old one is dropped, store/table-index-store.ts).
 */
import type { TableIndex } from "../../store/tenant-rows.ts";
import type { ProjectDefinition, TableDefinition } from "../definition/project-definition.ts";

export type { TableIndex } from "../../store/tenant-rows.ts";

function indexName(kind: string, columns: string[]): string {
  return `${kind}_${columns.join("_")}`;
}

const startsWith = (longer: string[], shorter: string[]) =>
  shorter.length <= longer.length && shorter.every((c, i) => longer[i] === c);

/** The columns, then those of the key that are not among them. */
function thenKey(columns: string[], key: string[]): string[] {
  return [...columns, ...key.filter((k) => !columns.includes(k))];
}

/** The indexes of one table of a definition. */
export function tableIndexes(table: TableDefinition): TableIndex[] {
  const wanted: TableIndex[] = [
    { name: "key", columns: table.key, unique: false, origin: "key" },
    ...(table.indexes ?? []).map(({ columns: declared, unique = false }) => {
      const columns = unique ? declared : thenKey(declared, table.key);
      return {
        name: indexName(unique ? "ux" : "ix", columns),
        columns,
        unique,
        origin: "definition" as const,
      };
    }),
    ...Object.values(table.parents ?? {}).map((p) => {
      const columns = thenKey(Object.keys(p.columns), table.key);
      return { name: indexName("fk", columns), columns, unique: false, origin: "foreign key" as const };
    }),
  ];
  const kept = wanted.filter(
    (index, i) =>
      index.unique ||
      !wanted.some(
        (other, j) =>
          j !== i &&
          startsWith(other.columns, index.columns) &&
          (other.columns.length > index.columns.length || other.unique || j < i),
      ),
  );
  return kept.filter((index, i) => kept.findIndex((other) => other.name === index.name) === i);
}

/** The indexes of every table of a definition, by table name. */
export function definitionIndexes(definition: ProjectDefinition): Map<string, TableIndex[]> {
  return new Map(Object.entries(definition.tables).map(([name, table]) => [name, tableIndexes(table)]));
}

/** What an index serves, in the filter language (`?` a value): filters, and orders (`order=`). */
export interface IndexUse {
  filters: string[];
  orders: string[];
}

/**
 * The filters and orders one of a table's indexes serves: equality on each run of its leading
 * columns, a range on its first column, the order of its columns (ascending) and, for an
 * index that ends with the key, the key's order (the default) where its other columns are fixed.
 */
export function indexServes(index: TableIndex, key: string[]): IndexUse {
  const { columns } = index;
  let own = columns.length;
  for (let last = columns[own - 1]; last !== undefined && key.includes(last); last = columns[own - 1]) own--;
  const endsWithKey = index.origin !== "key" && own > 0 && own < columns.length;
  const equal = (n: number) =>
    columns
      .slice(0, n)
      .map((c) => `${c} = ?`)
      .join(" and ");
  const filters = columns.slice(0, endsWithKey ? own : columns.length).map((_, i) => equal(i + 1));
  filters.push(`${columns[0]} < ? (or <=, >, >=, a range)`);
  // Tessera's orders end with the key ascending: the index's columns ascending match it.
  const orders = [columns.slice(0, endsWithKey ? own : columns.length).join(", ")];
  if (endsWithKey) orders.push(`the key's order (the default) where ${equal(own)}, with next_batch pages`);
  return { filters, orders };
}
