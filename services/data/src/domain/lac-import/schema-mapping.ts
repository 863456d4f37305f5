/**
 * The database schema (sql-schema.ts) and the export's own relationships as
 * Tessera tables: each SQL type as a column type (`DECIMAL` → `number`; a type
 * Tessera holds with less than the database did is reported as narrowed), the
 * primary key, NOT NULL as `required`, literal defaults, AUTO_INCREMENT /
 * IDENTITY / SERIAL as `generated`, unique keys and indexes, and each foreign
 * key as a parent relationship. Relationship names follow Live API Creator's: the
 * role to the parent is the foreign key's name (the parent table's name when it
 * has none), the list of children is `<child table>List`, so rule code
 * (`row.FK_Order_Details_Products`), sums (`OrdersList`) and clients' nested JSON
 * keep their names. A relationship the export defines (`Relationships`) keeps
 * the roles it names.
 */
import type { ColumnDefinition, ColumnType, TableDefinition } from "../definition/project-definition.ts";
import { NameSpace } from "./import-names.ts";
import { exportPath, type ImportReport } from "./import-report.ts";
import { entityTable, type LacRelationship } from "./lac-export.ts";
import type { SqlLiteral } from "./sql-ast.ts";
import type { SqlColumn, SqlSchema, SqlTable } from "./sql-schema.ts";

export interface MappedTable {
  name: string;
  source: SqlTable;
  definition: TableDefinition;
  /** SQL column name → Tessera column name. */
  columns: Map<string, string>;
}

/** The tables and how names of the database and of the export find them. */
export class MappedSchema {
  readonly tables = new Map<string, MappedTable>();
  readonly #bySqlName = new Map<string, MappedTable>();

  add(table: MappedTable): void {
    this.tables.set(table.name, table);
    this.#bySqlName.set(table.source.name, table);
  }

  /** The table an export names (`nw:Customers`, `Customers`, any letter case), if the schema has it. */
  table(entityOrName: string): MappedTable | undefined {
    const name = entityTable(entityOrName);
    const exact = this.#bySqlName.get(name);
    if (exact) return exact;
    const lower = name.toLowerCase();
    for (const [sqlName, table] of this.#bySqlName) if (sqlName.toLowerCase() === lower) return table;
    return undefined;
  }

  /** The Tessera column of a column the database or the export names (any letter case). */
  column(table: MappedTable, name: string): string | undefined {
    const exact = table.columns.get(name);
    if (exact) return exact;
    const lower = name.toLowerCase();
    for (const [sqlName, column] of table.columns) if (sqlName.toLowerCase() === lower) return column;
    return undefined;
  }

  /** The relationship (a parent role of `child`) whose list of children in `parent` is named `children`. */
  childList(parent: MappedTable, children: string): { child: MappedTable; role: string } | undefined {
    for (const child of this.tables.values()) {
      for (const [role, rel] of Object.entries(child.definition.parents ?? {})) {
        if (rel.table === parent.name && rel.children === children) return { child, role };
      }
    }
    return undefined;
  }
}

export function mapSchema(
  schema: SqlSchema,
  relationships: LacRelationship[],
  report: ImportReport,
): MappedSchema {
  const mapped = new MappedSchema();
  const tableNames = new NameSpace();
  for (const table of schema.tables.values()) {
    const name = tableNames.claim(table.name, "name");
    if (name !== table.name)
      report.add(
        table.source,
        `table '${table.name}' is named '${name}' (Tessera names: letters, digits, '_' and '-')`,
      );
    if (table.primaryKey.length === 0) {
      report.add(
        table.source,
        `table '${table.name}' has no primary key; Tessera tables need one, so it is left out`,
      );
      continue;
    }
    mapped.add(mapTable(name, table, report));
  }
  const childLists = new Map<string, NameSpace>();
  const listsOf = (parent: string) => {
    const names = childLists.get(parent) ?? new NameSpace();
    childLists.set(parent, names);
    return names;
  };
  for (const table of mapped.tables.values()) {
    for (const fk of table.source.foreignKeys) {
      const parent = mapped.table(fk.table);
      const where = fk.source;
      const label = `foreign key ${fk.name ? `'${fk.name}' ` : ""}of '${table.source.name}' (${fk.columns.join(", ")})`;
      if (!parent) {
        report.add(
          where,
          `${label}: its table '${fk.table}' is not in the schema, so the relationship is left out`,
        );
        continue;
      }
      const columns = relationshipColumns(mapped, table, parent, fk.columns, fk.refColumns);
      if (typeof columns === "string") {
        report.add(where, `${label}: ${columns}; the relationship is left out`);
        continue;
      }
      if (fk.actions.length > 0) {
        report.add(
          where,
          `${label}: ${fk.actions.join(", ")} is not kept: Tessera refuses to delete a parent that has children, and a changed key is not passed on`,
        );
      }
      addParent(table, parent, columns, fk.name ?? parent.name, `${table.name}List`, listsOf(parent.name));
    }
  }
  relationships.forEach((rel, index) => {
    const where = exportPath("Relationships", index);
    const child = mapped.table(rel.child_entity_name);
    const parent = mapped.table(rel.parent_entity_name);
    if (!child || !parent) {
      report.add(
        where,
        `relationship '${rel.role_to_parent}': table '${entityTable(child ? rel.parent_entity_name : rel.child_entity_name)}' is not in the schema, so it is left out`,
      );
      return;
    }
    const columns = relationshipColumns(
      mapped,
      child,
      parent,
      splitList(rel.child_columns),
      splitList(rel.parent_columns),
    );
    if (typeof columns === "string") {
      report.add(where, `relationship '${rel.role_to_parent}': ${columns}; it is left out`);
      return;
    }
    const parents = child.definition.parents ?? {};
    const same = Object.entries(parents).find(
      ([, p]) => p.table === parent.name && JSON.stringify(p.columns) === JSON.stringify(columns),
    );
    if (same) delete parents[same[0]];
    addParent(child, parent, columns, rel.role_to_parent, rel.role_to_child, listsOf(parent.name));
    if (rel.delete_rule && rel.delete_rule !== "R") {
      report.add(
        `${where}.delete_rule`,
        `delete rule '${rel.delete_rule}' is not kept: Tessera refuses to delete a parent that has children`,
      );
    }
  });
  return mapped;
}

function splitList(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** child column → parent key column, in the parent key's order; or why not. */
function relationshipColumns(
  schema: MappedSchema,
  child: MappedTable,
  parent: MappedTable,
  childColumns: string[],
  parentColumns: string[],
): Record<string, string> | string {
  const parentKey = parent.definition.key;
  const referenced =
    parentColumns.length > 0 ? parentColumns.map((c) => schema.column(parent, c)) : parentKey;
  if (referenced.length !== childColumns.length) return "its columns do not pair with the parent's";
  if (referenced.some((c) => c === undefined))
    return `it names a column '${parent.source.name}' does not have`;
  if ([...referenced].sort().join(",") !== [...parentKey].sort().join(",")) {
    return `it refers to ${referenced.join(", ")}, not to the primary key of '${parent.source.name}' (Tessera relationships refer to the parent's key)`;
  }
  const pairs = new Map<string, string>();
  for (const [i, column] of childColumns.entries()) {
    const own = schema.column(child, column);
    if (!own) return `'${child.source.name}' has no column '${column}'`;
    pairs.set(referenced[i] as string, own);
  }
  const columns: Record<string, string> = {};
  for (const key of parentKey) columns[pairs.get(key) as string] = key;
  return columns;
}

function addParent(
  child: MappedTable,
  parent: MappedTable,
  columns: Record<string, string>,
  wantedRole: string,
  wantedChildren: string,
  childLists: NameSpace,
): void {
  const parents = child.definition.parents ?? {};
  child.definition.parents = parents;
  const taken = new NameSpace([...Object.keys(parents), ...Object.keys(child.definition.columns)]);
  const role = taken.claim(wantedRole, "name");
  parents[role] = { table: parent.name, columns, children: childLists.claim(wantedChildren, "name") };
}

function mapTable(name: string, table: SqlTable, report: ImportReport): MappedTable {
  const columnNames = new NameSpace();
  const columns = new Map<string, string>();
  const definition: TableDefinition = { key: [], columns: {} };
  let generated: string | undefined;
  for (const column of table.columns) {
    const own = columnNames.claim(column.name, "column");
    if (own !== column.name)
      report.add(table.source, `column '${table.name}.${column.name}' is named '${own}'`);
    columns.set(column.name, own);
    const mapped = mapColumn(`${table.name}.${column.name}`, column, table.source, report);
    if (column.generated) {
      if (mapped.type !== "integer")
        report.add(
          table.source,
          `'${table.name}.${column.name}' is generated by the database but is not an integer; Tessera generates integers only, so its values must be given`,
        );
      else if (generated)
        report.add(
          table.source,
          `'${table.name}.${column.name}': Tessera generates one column per table ('${generated}' already)`,
        );
      else {
        mapped.generated = true;
        generated = own;
      }
    }
    const isKey = table.primaryKey.includes(column.name);
    if ((column.notNull || isKey) && !mapped.generated && mapped.default === undefined)
      mapped.required = true;
    definition.columns[own] = mapped;
  }
  definition.key = table.primaryKey.map((c) => columns.get(c) ?? c);
  const indexes = table.indexes
    .map((ix) => ({
      columns: ix.columns.map((c) => columns.get(c)).filter((c): c is string => !!c),
      unique: ix.unique,
    }))
    .filter((ix) => ix.columns.length > 0 && ix.columns.length <= 8)
    .filter((ix) => !(ix.unique && ix.columns.join() === definition.key.join()));
  if (indexes.length > 0)
    definition.indexes = indexes.slice(0, 32).map((ix) => (ix.unique ? ix : { columns: ix.columns }));
  return { name, source: table, definition, columns };
}

const INTEGER_TYPES =
  /^(INT|INTEGER|SMALLINT|TINYINT|MEDIUMINT|BIGINT|INT2|INT4|INT8|SERIAL|SMALLSERIAL|BIGSERIAL|YEAR)$/;
const NUMBER_TYPES =
  /^(DECIMAL|NUMERIC|NUMBER|DEC|MONEY|SMALLMONEY|REAL|FLOAT|FLOAT4|FLOAT8|DOUBLE|DOUBLE PRECISION)$/;
const STRING_TYPES =
  /^(CHAR|VARCHAR|NCHAR|NVARCHAR|CHARACTER|CHARACTER VARYING|VARCHAR2|NVARCHAR2|TEXT|NTEXT|TINYTEXT|MEDIUMTEXT|LONGTEXT|CLOB|NCLOB|UUID|UNIQUEIDENTIFIER|ENUM|SET|XML|CITEXT)$/;
const DATETIME_TYPES =
  /^(DATETIME|DATETIME2|SMALLDATETIME|DATETIMEOFFSET|TIMESTAMP|TIMESTAMPTZ|TIMESTAMP WITH TIME ZONE)$/;
const BINARY_TYPES = /^(BLOB|TINYBLOB|MEDIUMBLOB|LONGBLOB|BINARY|VARBINARY|BYTEA|IMAGE|RAW|LONG RAW)$/;

/** A column's Tessera type and constraints, reporting what is held with less than the database held. */
export function mapColumn(
  label: string,
  column: SqlColumn,
  where: string,
  report: ImportReport,
): ColumnDefinition {
  const t = column.sqlType;
  const narrowed = (why: string) =>
    report.add(
      where,
      `'${label}' (${t}${column.length ? `(${column.length}${column.scale !== undefined ? `,${column.scale}` : ""})` : ""}): ${why}`,
    );
  let type: ColumnType;
  let maxLength: number | undefined;
  if (
    (t === "TINYINT" && column.length === 1) ||
    (t === "BIT" && (column.length ?? 1) === 1) ||
    t === "BOOLEAN" ||
    t === "BOOL"
  ) {
    type = "boolean";
  } else if (INTEGER_TYPES.test(t)) {
    type = "integer";
    if (/BIG/.test(t) || t === "INT8") narrowed("integers beyond 2^53 lose precision in Tessera");
  } else if (NUMBER_TYPES.test(t)) {
    type =
      (t === "DECIMAL" || t === "NUMERIC" || t === "NUMBER") &&
      column.scale === 0 &&
      column.length !== undefined &&
      column.length <= 15
        ? "integer"
        : "number";
    if (type === "number" && column.length !== undefined && column.length > 15 && /DEC|NUM/.test(t)) {
      narrowed("held as a double: 15 significant digits, not the database's exact decimal");
    } else if (/MONEY|DEC|NUM/.test(t) && type === "number" && column.length === undefined) {
      narrowed("held as a double (15 significant digits), not an exact decimal");
    }
  } else if (STRING_TYPES.test(t)) {
    type = "string";
    if (/CHAR/.test(t) && column.length !== undefined) maxLength = column.length;
  } else if (t === "DATE") {
    type = "date";
  } else if (DATETIME_TYPES.test(t)) {
    type = "datetime";
  } else if (t === "JSON" || t === "JSONB") {
    type = "json";
  } else if (t === "TIME" || t === "TIMETZ" || t === "INTERVAL") {
    type = "string";
    narrowed("Tessera has no time-of-day type; held as text");
  } else if (BINARY_TYPES.test(t)) {
    type = "string";
    narrowed("Tessera has no binary type; held as text (base64, as the original's JSON carried it)");
  } else if (t === "BIT") {
    type = "integer";
    narrowed("a bit string held as an integer");
  } else {
    type = "string";
    narrowed("a type the importer does not know; held as text");
  }
  const mapped: ColumnDefinition = { type };
  if (maxLength !== undefined) mapped.maxLength = maxLength;
  if (column.default) {
    const value = defaultValue(column.default, type);
    if (value === undefined)
      narrowed(`its default ${literalText(column.default)} does not fit the column's type; it has none`);
    else if (value !== null) mapped.default = value;
  } else if (column.defaultExpression) {
    narrowed(
      `its default ${column.defaultExpression} is computed by the database; Tessera defaults are constants (a formula or an early event can set it)`,
    );
  }
  return mapped;
}

function literalText(literal: SqlLiteral): string {
  return literal.kind === "string"
    ? `'${literal.value}'`
    : literal.kind === "number"
      ? literal.text
      : literal.kind === "boolean"
        ? String(literal.value)
        : "NULL";
}

/** A literal default as a value of the column's type; null for NULL; undefined when it does not fit. */
function defaultValue(literal: SqlLiteral, type: ColumnType): unknown {
  if (literal.kind === "null") return null;
  switch (type) {
    case "integer":
      return literal.kind === "number" && Number.isInteger(literal.value) ? literal.value : undefined;
    case "number":
      return literal.kind === "number" ? literal.value : undefined;
    case "boolean":
      if (literal.kind === "boolean") return literal.value;
      if (literal.kind === "number" && (literal.value === 0 || literal.value === 1))
        return literal.value === 1;
      if (literal.kind === "string" && /^(true|false|1|0|b'[01]')$/i.test(literal.value))
        return /^(true|1|b'1')$/i.test(literal.value);
      return undefined;
    case "string":
      return literal.kind === "string" ? literal.value : literal.kind === "number" ? literal.text : undefined;
    case "date":
      return literal.kind === "string" && /^\d{4}-\d{2}-\d{2}$/.test(literal.value)
        ? literal.value
        : undefined;
    default:
      return undefined;
  }
}
