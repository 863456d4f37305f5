/**
 * Rows as CSV (`responseformat=csv`), RFC 4180: one header row, CRLF line ends,
 * fields with commas, quotes or any line break (CR, LF or both) quoted (quotes
 * doubled), so a reader that splits records on a bare LF keeps them whole. Written
 * with csv-stringify, which also neutralises spreadsheet formulas.
 *
 * Cells: null is an empty field, the empty string a quoted empty field (`""`),
 * booleans `true`/`false`, numbers as JSON writes them, objects and arrays (json
 * columns) as JSON text. A text that starts with `=`, `+`, `-`, `@`, tab or CR
 * gets a leading `'`, so a spreadsheet shows it instead of running it as a
 * formula (numbers are never changed).
 */
import { stringify } from "csv-stringify/sync";

export interface CsvColumn {
  header: string;
  /** Property names from the row object down to the value (more than one for flattened parents). */
  path: string[];
}

function cell(row: Record<string, unknown>, path: string[]): unknown {
  let value: unknown = row;
  for (const name of path) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
    value = (value as Record<string, unknown>)[name];
  }
  if (value === undefined || value === null) return null;
  if (typeof value === "object") return JSON.stringify(value);
  return value;
}

export function toCsv(columns: CsvColumn[], rows: Record<string, unknown>[]): string {
  return stringify(
    rows.map((row) => columns.map((c) => cell(row, c.path))),
    {
      header: true,
      columns: columns.map((c) => c.header),
      record_delimiter: "windows",
      // Without this only the record delimiter itself (CRLF) would be quoted, not a lone CR or LF.
      quote_record_delimiter: true,
      escape_formulas: true,
      cast: {
        boolean: (value) => (value ? "true" : "false"),
        string: (value) => (value === "" ? { value, quoted_empty: true } : value),
      },
    },
  );
}
