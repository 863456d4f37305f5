/**
 * Rows of the old database, for loading into the imported project: CSV, one
 * text per table (a header row of column names, then one row a line), or SQL
 * `INSERT INTO t (columns) VALUES (…), (…)` statements. Each value is turned
 * into its column's type (a number, a boolean from 1/0/true/false, a date's
 * `YYYY-MM-DD`, a date-time in ISO 8601 — without a zone it is UTC); an empty
 * CSV cell leaves the column out, so its default applies. Tables come parents
 * first, and within a table that refers to itself, a row after the row it
 * refers to. What cannot be placed (an unknown table or column, a statement the
 * parser cannot read) is reported.
 */
import { parse as parseCsv } from "csv-parse/sync";
import type { ColumnType } from "../definition/project-definition.ts";
import type { ImportReport } from "./import-report.ts";
import type { MappedSchema, MappedTable } from "./schema-mapping.ts";
import { columnOf, isNode, literalOf, parseSql, type SqlDialect, tableOf } from "./sql-ast.ts";
import { splitStatements, statementWords } from "./sql-statements.ts";

export interface DataInput {
  /** Table name (as the database or the export names it) → CSV text with a header row. */
  csv?: Record<string, string>;
  /** INSERT statements in the schema's dialect. */
  sql?: string;
}

export interface DataRow {
  /** `data.<table>[<n>]` (the n-th row given for the table, from 1), for the report. */
  source: string;
  values: Record<string, unknown>;
}

/** Rows per Tessera table, tables in the order they can be loaded (parents first). */
export type TableRows = { table: string; rows: DataRow[] }[];

export function readDataRows(
  input: DataInput,
  schema: MappedSchema,
  dialect: SqlDialect,
  report: ImportReport,
): TableRows {
  const byTable = new Map<string, DataRow[]>();
  const add = (table: MappedTable, values: Record<string, unknown>) => {
    const rows = byTable.get(table.name) ?? [];
    byTable.set(table.name, rows);
    rows.push({ source: `data.${table.name}[${rows.length + 1}]`, values });
  };
  for (const [name, text] of Object.entries(input.csv ?? {})) readCsv(name, text, schema, report, add);
  if (input.sql) readInserts(input.sql, dialect, schema, report, add);
  return loadOrder(schema, byTable);
}

function readCsv(
  name: string,
  text: string,
  schema: MappedSchema,
  report: ImportReport,
  add: (table: MappedTable, values: Record<string, unknown>) => void,
): void {
  const table = schema.table(name);
  if (!table) {
    report.add(`data.${name}`, `table '${name}' is not in the schema; its rows are not loaded`);
    return;
  }
  let records: string[][];
  try {
    records = parseCsv(text, { bom: true, relax_column_count: false, skip_empty_lines: true }) as string[][];
  } catch (err) {
    report.add(
      `data.${name}`,
      `the CSV does not parse (${err instanceof Error ? err.message : String(err)}); its rows are not loaded`,
    );
    return;
  }
  const [header, ...rows] = records;
  if (!header) return;
  const columns = header.map((h) => schema.column(table, h.trim()));
  header.forEach((h, i) => {
    if (!columns[i])
      report.add(
        `data.${name}`,
        `'${table.source.name}' has no column '${h}'; that column of the CSV is not loaded`,
      );
  });
  for (const cells of rows) {
    const values: Record<string, unknown> = {};
    cells.forEach((cell, i) => {
      const column = columns[i];
      if (column && cell !== "") values[column] = typed(cell, columnType(table, column));
    });
    add(table, values);
  }
}

function readInserts(
  sql: string,
  dialect: SqlDialect,
  schema: MappedSchema,
  report: ImportReport,
  add: (table: MappedTable, values: Record<string, unknown>) => void,
): void {
  for (const statement of splitStatements(sql)) {
    const where = `data.sql:${statement.line}`;
    if (!/^insert\b/i.test(statementWords(statement.text))) {
      report.add(where, "only INSERT statements are read from the data; this one is passed over");
      continue;
    }
    const parsed = parseSql(statement.text, dialect);
    const node = parsed.ok ? parsed.nodes[0] : undefined;
    if (!parsed.ok || !node) {
      report.add(
        where,
        `the ${dialect} parser cannot read this statement: ${parsed.ok ? "empty" : parsed.error}`,
      );
      continue;
    }
    const name = tableOf(node.table);
    const table = name === undefined ? undefined : schema.table(name);
    if (!table) {
      report.add(where, `table '${name ?? "?"}' is not in the schema; its rows are not loaded`);
      continue;
    }
    const named = Array.isArray(node.columns)
      ? node.columns.map((c) =>
          typeof c === "string" ? c : (columnOf(c) ?? (isNode(c) ? String(c.value) : "")),
        )
      : table.source.columns.map((c) => c.name);
    const columns = named.map((c) => schema.column(table, c));
    named.forEach((c, i) => {
      if (!columns[i])
        report.add(where, `'${table.source.name}' has no column '${c}'; its values are not loaded`);
    });
    const lists = isNode(node.values) && Array.isArray(node.values.values) ? node.values.values : [];
    for (const list of lists) {
      const items = isNode(list) && Array.isArray(list.value) ? list.value : [];
      const values: Record<string, unknown> = {};
      items.forEach((item, i) => {
        const column = columns[i];
        const literal = literalOf(item);
        if (!column) return;
        if (!literal) {
          report.add(where, `a value of '${named[i]}' is not a literal; it is left out`);
          return;
        }
        if (literal.kind === "null") values[column] = null;
        else if (literal.kind === "boolean") values[column] = literal.value;
        else
          values[column] = typed(
            literal.kind === "number" ? literal.text : literal.value,
            columnType(table, column),
          );
      });
      add(table, values);
    }
  }
}

function columnType(table: MappedTable, column: string): ColumnType {
  return table.definition.columns[column]?.type ?? "string";
}

/** A text from the old database as a value of the column's type (left as text when it does not read as one). */
export function typed(text: string, type: ColumnType): unknown {
  const trimmed = text.trim();
  switch (type) {
    case "integer":
    case "number":
      return /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed) ? Number(trimmed) : text;
    case "boolean":
      if (/^(1|true|t|y|yes)$/i.test(trimmed)) return true;
      if (/^(0|false|f|n|no)$/i.test(trimmed)) return false;
      return text;
    case "date": {
      const m = /^(\d{4}-\d{2}-\d{2})([ T]00:00(:00(\.0+)?)?)?$/.exec(trimmed);
      return m ? m[1] : text;
    }
    case "datetime": {
      const m =
        /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?))?(Z|[+-]\d{2}:?\d{2})?$/.exec(
          trimmed,
        );
      if (!m) return text;
      return `${m[1]}T${m[2] ?? "00:00:00"}${m[3] ?? "Z"}`;
    }
    case "json":
      try {
        return JSON.parse(trimmed);
      } catch {
        return text;
      }
    default:
      return text;
  }
}

/** Tables parents first (a cycle between tables keeps the schema's order), each table's rows after the rows they refer to. */
function loadOrder(schema: MappedSchema, byTable: Map<string, DataRow[]>): TableRows {
  const ordered: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string) => {
    if (state.has(name)) return;
    state.set(name, "visiting");
    for (const parent of Object.values(schema.tables.get(name)?.definition.parents ?? {})) {
      if (parent.table !== name) visit(parent.table);
    }
    state.set(name, "done");
    ordered.push(name);
  };
  for (const name of schema.tables.keys()) visit(name);
  return ordered
    .filter((name) => byTable.has(name))
    .map((name) => ({
      table: name,
      rows: selfOrdered(schema.tables.get(name) as MappedTable, byTable.get(name) as DataRow[]),
    }));
}

/** A table's rows with each after the row of the same table it refers to (rows in a cycle keep their order). */
function selfOrdered(table: MappedTable, rows: DataRow[]): DataRow[] {
  const own = Object.values(table.definition.parents ?? {}).filter((p) => p.table === table.name);
  if (own.length === 0) return rows;
  const keyOf = (values: Record<string, unknown>, columns: string[]) =>
    JSON.stringify(columns.map((c) => values[c] ?? null));
  const byKey = new Map(rows.map((r) => [keyOf(r.values, table.definition.key), r]));
  const placed = new Set<DataRow>();
  const out: DataRow[] = [];
  const place = (row: DataRow, depth: number) => {
    if (placed.has(row) || depth > rows.length) return;
    for (const rel of own) {
      const parentKey = keyOf(
        row.values,
        table.definition.key.map((k) => Object.entries(rel.columns).find(([, p]) => p === k)?.[0] ?? k),
      );
      const parent = byKey.get(parentKey);
      if (parent && parent !== row) place(parent, depth + 1);
    }
    if (!placed.has(row)) {
      placed.add(row);
      out.push(row);
    }
  };
  for (const row of rows) place(row, 0);
  return out;
}
