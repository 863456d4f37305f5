/**
 * The tables of a database schema, read from its DDL (`CREATE TABLE` with
 * primary keys, foreign keys, unique keys and defaults; `ALTER TABLE … ADD
 * CONSTRAINT … FOREIGN KEY`; `CREATE [UNIQUE] INDEX`) with node-sql-parser, in
 * the dialect the schema was written in. Each statement is parsed on its own:
 * one the parser cannot read is reported by its line, and the rest still count.
 * Other statements (INSERT, SET, DROP, views, …) are passed over.
 */
import type { ImportReport } from "./import-report.ts";
import {
  columnOf,
  isNode,
  literalOf,
  nameOf,
  parseSql,
  type SqlDialect,
  type SqlLiteral,
  type SqlNode,
  tableOf,
} from "./sql-ast.ts";
import { splitStatements, statementWords } from "./sql-statements.ts";

export interface SqlColumn {
  name: string;
  /** The SQL type as written, upper case, without its length (`DECIMAL`, `VARCHAR`). */
  sqlType: string;
  length?: number;
  scale?: number;
  notNull: boolean;
  /** AUTO_INCREMENT, IDENTITY, SERIAL. */
  generated: boolean;
  default?: SqlLiteral;
  /** A default that is not a literal (`CURRENT_TIMESTAMP`, a function): its text. */
  defaultExpression?: string;
}

export interface SqlForeignKey {
  /** The constraint's name, when it has one. */
  name?: string;
  columns: string[];
  table: string;
  /** Empty when the DDL names none: the referenced table's primary key. */
  refColumns: string[];
  /** `ON DELETE CASCADE` and the like, as written. */
  actions: string[];
  /** `ddl:<line>`. */
  source: string;
}

export interface SqlTable {
  name: string;
  columns: SqlColumn[];
  primaryKey: string[];
  foreignKeys: SqlForeignKey[];
  indexes: { columns: string[]; unique: boolean }[];
  source: string;
}

export interface SqlSchema {
  tables: Map<string, SqlTable>;
}

export function readSchema(ddl: string, dialect: SqlDialect, report: ImportReport): SqlSchema {
  const tables = new Map<string, SqlTable>();
  const later: { node: SqlNode; source: string }[] = [];
  for (const statement of splitStatements(ddl)) {
    const source = `ddl:${statement.line}`;
    const words = statementWords(statement.text);
    const kind = /^(create\s+(?:unique\s+)?(?:table|index)|alter\s+table)\b/i.exec(words)?.[1];
    if (!kind) continue;
    const parsed = parseSql(statement.text, dialect);
    if (!parsed.ok) {
      report.add(
        source,
        `the ${dialect} parser cannot read this statement (${firstWords(words)}): ${parsed.error}`,
      );
      continue;
    }
    for (const node of parsed.nodes) {
      if (node.type === "create" && node.keyword === "table") {
        const table = createTable(node, source, report);
        if (!table) continue;
        if (tables.has(table.name))
          report.add(source, `table '${table.name}' is created twice; the later one counts`);
        tables.set(table.name, table);
      } else later.push({ node, source });
    }
  }
  for (const { node, source } of later) {
    if (node.type === "alter") alterTable(node, source, tables, report);
    else if (node.type === "create" && node.keyword === "index") createIndex(node, source, tables, report);
  }
  return { tables };
}

function firstWords(text: string): string {
  const words = text.replace(/\s+/g, " ").slice(0, 60);
  return words.length < text.length ? `${words}…` : words;
}

function createTable(node: SqlNode, source: string, report: ImportReport): SqlTable | undefined {
  const name = tableOf(node.table);
  if (!name) {
    report.add(source, "a CREATE TABLE without a table name the importer can read");
    return undefined;
  }
  const table: SqlTable = { name, columns: [], primaryKey: [], foreignKeys: [], indexes: [], source };
  const definitions = Array.isArray(node.create_definitions) ? node.create_definitions : [];
  for (const def of definitions) {
    if (!isNode(def)) continue;
    if (def.resource === "column") addColumn(table, def, source);
    else if (def.resource === "constraint") addConstraint(table, def, source, report);
    else if (def.resource === "index") {
      const columns = columnList(def.definition);
      if (columns.length > 0) table.indexes.push({ columns, unique: false });
    }
  }
  return table;
}

function addColumn(table: SqlTable, def: SqlNode, source: string): void {
  const name = columnOf(def.column);
  const type = isNode(def.definition) ? def.definition : {};
  if (!name) return;
  const sqlType = String(type.dataType ?? "").toUpperCase();
  const suffix = Array.isArray(type.suffix) ? type.suffix.map(String).join(" ").toUpperCase() : "";
  const column: SqlColumn = {
    name,
    sqlType: suffix.includes("TIME ZONE") ? `${sqlType} WITH TIME ZONE` : sqlType,
    length: typeof type.length === "number" ? type.length : undefined,
    scale: typeof type.scale === "number" ? type.scale : undefined,
    notNull: isNode(def.nullable) && def.nullable.type === "not null",
    generated:
      def.auto_increment !== undefined && def.auto_increment !== null
        ? true
        : /SERIAL$/.test(sqlType) ||
          isNode(def.identity) ||
          /IDENTITY/.test(JSON.stringify(def.definition ?? "")),
  };
  const fallback = isNode(def.default_val) ? def.default_val.value : undefined;
  if (fallback !== undefined) {
    const literal =
      literalOf(fallback) ??
      literalOf(
        isNode(fallback) && fallback.type === "expr_list" ? (fallback.value as unknown[])?.[0] : undefined,
      );
    if (literal) column.default = literal;
    else column.defaultExpression = expressionText(fallback);
  }
  table.columns.push(column);
  if (def.primary_key) table.primaryKey = [name];
  if (def.unique || def.unique_or_primary === "unique") table.indexes.push({ columns: [name], unique: true });
  const reference = isNode(def.reference_definition) ? def.reference_definition : undefined;
  if (reference) table.foreignKeys.push(foreignKey(undefined, [name], reference, source));
}

function addConstraint(table: SqlTable, def: SqlNode, source: string, report: ImportReport): void {
  const type = String(def.constraint_type ?? "").toLowerCase();
  const columns = columnList(def.definition);
  const name = typeof def.constraint === "string" ? def.constraint : undefined;
  if (type === "primary key") table.primaryKey = columns;
  else if (type === "foreign key" && isNode(def.reference_definition)) {
    table.foreignKeys.push(foreignKey(name, columns, def.reference_definition, source));
  } else if (type.startsWith("unique")) table.indexes.push({ columns, unique: true });
  else if (type === "check")
    report.add(
      source,
      `CHECK constraint${name ? ` '${name}'` : ""} of '${table.name}': Tessera has no check constraints (a validation rule can say the same)`,
    );
}

function foreignKey(
  name: string | undefined,
  columns: string[],
  reference: SqlNode,
  source: string,
): SqlForeignKey {
  const actions = Array.isArray(reference.on_action)
    ? reference.on_action
        .filter(isNode)
        .map((a) => `${String(a.type).toUpperCase()} ${String(nameOf(a.value) ?? "").toUpperCase()}`)
    : [];
  return {
    name,
    columns,
    table: tableOf(reference.table) ?? "",
    refColumns: columnList(reference.definition),
    actions,
    source,
  };
}

function alterTable(
  node: SqlNode,
  source: string,
  tables: Map<string, SqlTable>,
  report: ImportReport,
): void {
  const name = tableOf(node.table);
  const table = name === undefined ? undefined : tables.get(name);
  const expressions = Array.isArray(node.expr) ? node.expr.filter(isNode) : [];
  for (const expr of expressions) {
    const def = isNode(expr.create_definitions) ? expr.create_definitions : undefined;
    if (expr.action !== "add" || !def || def.resource !== "constraint") continue;
    if (!table) {
      report.add(source, `ALTER TABLE of '${name ?? "?"}', a table the schema does not create`);
      continue;
    }
    addConstraint(table, def, source, report);
  }
}

function createIndex(
  node: SqlNode,
  source: string,
  tables: Map<string, SqlTable>,
  report: ImportReport,
): void {
  const name = tableOf(node.table) ?? (isNode(node.table) ? nameOf(node.table.table) : undefined);
  const table = name === undefined ? undefined : tables.get(name);
  const columns = columnList(node.index_columns);
  if (!table || columns.length === 0) {
    report.add(source, `an index of '${name ?? "?"}' the importer cannot place`);
    return;
  }
  table.indexes.push({ columns, unique: String(node.index_type ?? "").toLowerCase() === "unique" });
}

function columnList(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list
    .map((item) => columnOf(item) ?? (isNode(item) ? nameOf(item.column) : nameOf(item)))
    .filter((n): n is string => n !== undefined);
}

function expressionText(node: unknown): string {
  if (!isNode(node)) return String(node);
  if (node.type === "function") {
    const parts =
      isNode(node.name) && Array.isArray(node.name.name)
        ? node.name.name.map(nameOf).join(".")
        : "a function";
    return `${parts}(…)`;
  }
  return typeof node.value === "string" ? node.value : String(node.type ?? "an expression");
}
