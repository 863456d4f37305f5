/**
 * The tables of a compiled project: each table's columns, key, generated
 * column and store indexes, and the relationships between tables, checked on
 * the way (problems carry JSON paths; references to lost parts are not
 * reported). The rest of the model (project-model.ts) and the rules
 * (rule-model.ts) are compiled over these tables.
 */
import { present } from "../../../../../shared/present.ts";
import type { LostParts } from "../definition/definition-salvage.ts";
import type { Report } from "../definition/problems.ts";
import type { ColumnDefinition, ColumnType, ProjectDefinition } from "../definition/project-definition.ts";
import { type TableIndex, tableIndexes } from "./table-indexes.ts";

export interface ColumnModel {
  name: string;
  type: ColumnType;
  required: boolean;
  generated: boolean;
  default: unknown;
  maxLength?: number;
}

/** A child table's foreign key to a parent table. */
export interface Relationship {
  /** Role name in the child (`row.<role>` is the parent). */
  role: string;
  /** Name of the child list in the parent. */
  childrenName: string;
  childTable: string;
  parentTable: string;
  childColumns: string[];
  parentColumns: string[];
}

export interface TableModel {
  name: string;
  key: string[];
  columns: Map<string, ColumnModel>;
  columnOrder: string[];
  parents: Map<string, Relationship>;
  children: Map<string, Relationship>;
  generatedColumn: string | undefined;
  /** The store indexes the table has (table-indexes.ts). */
  indexes: TableIndex[];
}

/** The foreign key of a relationship, column by column: a child column and the parent column it holds. */
export function foreignKey(rel: Relationship): { child: string; parent: string }[] {
  return rel.childColumns.flatMap((child, i) => {
    const parent = rel.parentColumns[i];
    return parent === undefined ? [] : [{ child, parent }];
  });
}

/** A table of the project by a name the model itself holds (a relationship's): every such table exists. */
export function tableNamed(tables: ReadonlyMap<string, TableModel>, name: string): TableModel {
  const table = tables.get(name);
  if (!table) throw new Error(`The project has no table '${name}'`);
  return table;
}

/** A column of the table by a name the model itself holds (its key's, its column order's): every such column exists. */
export function columnNamed(table: TableModel, name: string): ColumnModel {
  return present(table.columns.get(name), `column '${name}' of '${table.name}'`);
}

function columnModel(name: string, c: ColumnDefinition): ColumnModel {
  return {
    name,
    type: c.type,
    required: c.required ?? false,
    generated: c.generated ?? false,
    default: c.default,
    maxLength: c.maxLength,
  };
}

export function compileTables(
  definition: ProjectDefinition,
  { lost, report }: { lost: LostParts; report: Report },
): Map<string, TableModel> {
  const tables = new Map<string, TableModel>();
  for (const [tableName, t] of Object.entries(definition.tables)) {
    const columns = new Map(Object.entries(t.columns).map(([n, c]) => [n, columnModel(n, c)]));
    const generated = [...columns.values()].filter((c) => c.generated);
    for (const c of generated) {
      if (c.type !== "integer")
        report(
          ["tables", tableName, "columns", c.name, "generated"],
          "only integer columns can be generated",
        );
    }
    if (generated.length > 1) report(["tables", tableName, "columns"], "at most one column can be generated");
    t.key.forEach((k, i) => {
      const column = columns.get(k);
      if (!column) {
        if (!lost.has(["tables", tableName, "columns", k]))
          report(["tables", tableName, "key", i], `key column '${k}' is not a column of the table`);
        // Reported once here, not again by every part that must name the key.
        lost.add(["tables", tableName, "columns", k]);
      } else if (column.type === "json")
        report(["tables", tableName, "key", i], "a json column cannot be part of the key");
    });
    if (new Set(t.key).size !== t.key.length)
      report(["tables", tableName, "key"], "key columns must be distinct");
    (t.indexes ?? []).forEach((index, i) => {
      index.columns.forEach((c, j) => {
        if (!columns.has(c) && !lost.has(["tables", tableName, "columns", c]))
          report(["tables", tableName, "indexes", i, "columns", j], `'${c}' is not a column of the table`);
      });
      if (new Set(index.columns).size !== index.columns.length)
        report(["tables", tableName, "indexes", i, "columns"], "index columns must be distinct");
    });
    tables.set(tableName, {
      name: tableName,
      key: t.key,
      columns,
      columnOrder: [...columns.keys()],
      parents: new Map(),
      children: new Map(),
      generatedColumn: generated[0]?.name,
      indexes: tableIndexes(t),
    });
  }
  for (const child of tables.values()) {
    for (const [role, p] of Object.entries(definition.tables[child.name]?.parents ?? {})) {
      const path = ["tables", child.name, "parents", role];
      const parent = tables.get(p.table);
      if (!parent) {
        if (!lost.has(["tables", p.table])) report([...path, "table"], `no table '${p.table}'`);
        lost.add(path);
        continue;
      }
      const childColumns = Object.keys(p.columns);
      const parentColumns = Object.values(p.columns);
      childColumns.forEach((c, i) => {
        const cc = child.columns.get(c);
        const parentColumn = parentColumns[i] ?? "";
        const pc = parent.columns.get(parentColumn);
        if (!cc && !lost.has(["tables", child.name, "columns", c]))
          report([...path, "columns", c], `'${c}' is not a column of '${child.name}'`);
        if (!pc && !lost.has(["tables", p.table, "columns", parentColumn]))
          report([...path, "columns", c], `'${parentColumn}' is not a column of '${p.table}'`);
        if (cc && pc && cc.type !== pc.type) {
          report(
            [...path, "columns", c],
            `type ${cc.type} does not match the parent column's type ${pc.type}`,
          );
        }
      });
      const parentKeyKnown = parent.key.every((k) => parent.columns.has(k));
      if (parentKeyKnown && parentColumns.join("\0") !== parent.key.join("\0")) {
        report(
          [...path, "columns"],
          `must map onto the key of '${p.table}' (${parent.key.join(", ")}) in order`,
        );
      }
      if (child.columns.has(role))
        report(path, `role name '${role}' clashes with a column of '${child.name}'`);
      const childrenName = p.children ?? `${child.name}List`;
      if (parent.children.has(childrenName) || parent.columns.has(childrenName)) {
        report([...path, "children"], `'${childrenName}' is already used in '${p.table}'`);
      }
      const rel: Relationship = {
        role,
        childrenName,
        childTable: child.name,
        parentTable: p.table,
        childColumns,
        parentColumns,
      };
      child.parents.set(role, rel);
      parent.children.set(childrenName, rel);
    }
  }
  return tables;
}
