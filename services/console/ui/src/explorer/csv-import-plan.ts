/**
 * What a CSV file would import, worked out before anything is sent: its header row mapped
 * to the collection's attributes, and each record either an object to insert or refused
 * with the reason (a field count that differs from the header's, a value its column's type
 * cannot take). An empty field is left out (null in the API's CSV form: the default
 * applies), a quoted empty one is the empty string.
 */
import type { ColumnInfo } from "./columns.ts";
import { type CsvRecord, csvRecords } from "./csv-records.ts";
import { typedValue } from "./typed-values.ts";

export interface LineError {
  /** The line (from 1) the record starts on. */
  line: number;
  message: string;
}

export interface CsvRow {
  line: number;
  object: Record<string, unknown>;
}

export interface ImportPlan {
  /** The attributes the header's columns map to, in the file's order. */
  header: ColumnInfo[];
  /** The records that can be sent. */
  rows: CsvRow[];
  /** The records refused before sending, with why. */
  refused: LineError[];
}

/** The object a record inserts, or why it cannot be sent. */
function objectOf(record: CsvRecord, header: ColumnInfo[]): Record<string, unknown> | string {
  if (record.fields.length !== header.length)
    return `has ${record.fields.length} fields, the header ${header.length}`;
  const object: Record<string, unknown> = {};
  for (const [i, column] of header.entries()) {
    const field = record.fields[i] ?? { text: "", quoted: false };
    if (field.text === "" && !field.quoted) continue;
    const typed = typedValue(column.type, { text: field.text, isNull: false });
    if (!typed.ok) return `${column.name} ${typed.message}`;
    object[column.name] = typed.value;
  }
  return object;
}

/** The plan for a file's text; throws (CsvSyntaxError, Error) when the file cannot be read as a whole. */
export function importPlan(text: string, columns: ColumnInfo[]): ImportPlan {
  const records = csvRecords(text);
  const names = records.shift()?.fields.map((f) => f.text) ?? [];
  if (names.length === 0) throw new Error("The file has no header row.");
  const unknown = names.filter((n) => !columns.some((c) => c.name === n));
  if (unknown.length > 0) throw new Error(`Not attributes of this collection: ${unknown.join(", ")}.`);
  const header = names.flatMap((n) => columns.filter((c) => c.name === n));
  const rows: CsvRow[] = [];
  const refused: LineError[] = [];
  for (const record of records) {
    const object = objectOf(record, header);
    if (typeof object === "string") refused.push({ line: record.line, message: object });
    else rows.push({ line: record.line, object });
  }
  return { header, rows, refused };
}

/** Consecutive batches of at most `size` rows. */
export function batchesOf<T>(rows: T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < rows.length; i += size) batches.push(rows.slice(i, i + size));
  return batches;
}
