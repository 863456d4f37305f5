/**
 * The store indexes a project definition asks for, per table: the key (ordered
 * lists and keyset pages), every relationship's foreign-key columns in key
 * order (children of a parent: nested reads, rule cascades, delete checks),
 * and the table's own `indexes` (filters and orders an app uses; `unique`
 * refuses a second row with the same values). An index whose columns begin
 * another one's is left out (the longer one serves it), unless it is unique.
 * Names are made from the columns, so the same index keeps its name across
 * revisions and applying a definition again changes nothing.
 */
import type { TableIndex } from "../../store/tenant-rows.ts";
import type { ProjectDefinition, TableDefinition } from "../definition/project-definition.ts";

export type { TableIndex } from "../../store/tenant-rows.ts";

function indexName(kind: string, columns: string[]): string {
  return `${kind}_${columns.join("_")}`;
}

const startsWith = (longer: string[], shorter: string[]) =>
  shorter.length <= longer.length && shorter.every((c, i) => longer[i] === c);

/** The indexes of one table of a definition. */
export function tableIndexes(table: TableDefinition): TableIndex[] {
  const wanted: TableIndex[] = [
    { name: "key", columns: table.key, unique: false, origin: "key" },
    ...(table.indexes ?? []).map(({ columns, unique = false }) => ({
      name: indexName(unique ? "ux" : "ix", columns),
      columns,
      unique,
      origin: "definition" as const,
    })),
    ...Object.values(table.parents ?? {}).map((p) => {
      const columns = Object.keys(p.columns);
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
