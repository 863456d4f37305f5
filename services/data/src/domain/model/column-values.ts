/**
 * Column values: coercion of client JSON into typed stored values (the only
 * door into the store, so no object ever reaches a query as an operator),
 * conversion back to JSON, and primary keys in URLs and `_id`s.
 */
import { errors } from "../../../../../shared/errors.ts";
import { decodePathSegment } from "../../../../../shared/http/path-segment.ts";
import { present } from "../../../../../shared/present.ts";
import type { RowId } from "../../store/tenant-rows.ts";
import type { ColumnModel, TableModel } from "./project-model.ts";
import { columnNamed } from "./table-model.ts";

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** The strings number and integer columns take besides JSON numbers: no hex, binary, octal or blanks. */
const PLAIN_DECIMAL = /^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** True for an object that is not an array (and not null): a JSON object. */
/** `values` without repeats, values being equal when their JSON is (the last of equal ones kept). */
export function distinctByJson<T>(values: T[]): T[] {
  return [...new Map(values.map((v) => [JSON.stringify(v), v])).values()];
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Coerces one value for `column`; `label` names the attribute in errors. null stays null. */
export function coerceValue(column: ColumnModel, value: unknown, label: string): unknown {
  if (value === null) return null;
  const bad = (what: string) => errors.badAttribute(`Attribute '${label}' ${what}`);
  switch (column.type) {
    case "string": {
      if (typeof value !== "string") {
        if (typeof value === "number" || typeof value === "boolean") return String(value);
        throw bad("must be a string");
      }
      if (column.maxLength !== undefined && value.length > column.maxLength) {
        throw bad(`is longer than ${column.maxLength} characters`);
      }
      return value;
    }
    case "number":
    case "integer": {
      const n =
        typeof value === "number"
          ? value
          : typeof value === "string" && PLAIN_DECIMAL.test(value)
            ? Number(value)
            : Number.NaN;
      if (!Number.isFinite(n)) throw bad(`must be a ${column.type}`);
      if (column.type === "integer" && !Number.isSafeInteger(n)) throw bad("must be an integer");
      return n;
    }
    case "boolean": {
      if (typeof value === "boolean") return value;
      if (value === "true") return true;
      if (value === "false") return false;
      throw bad("must be true or false");
    }
    case "date": {
      const m = typeof value === "string" ? DATE.exec(value) : null;
      if (!m) throw bad("must be a date (YYYY-MM-DD)");
      const d = new Date(`${value}T00:00:00.000Z`);
      if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value)
        throw bad("is not a valid date");
      return value;
    }
    case "datetime": {
      // A date-time without a zone is UTC (as filters read it), never the server's local time.
      const zoned = typeof value === "string" && !/(Z|[+-]\d{2}:?\d{2})$/i.test(value) ? `${value}Z` : value;
      const d =
        typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value) ? new Date(zoned as string) : null;
      if (!d || Number.isNaN(d.getTime())) throw bad("must be an ISO 8601 date-time");
      return d.toISOString();
    }
    case "json":
      return JSON.stringify(value);
  }
}

/** Stored value back to JSON for responses. */
export function outputValue(column: ColumnModel, stored: unknown): unknown {
  if (stored === undefined || stored === null) return null;
  if (column.type === "json" && typeof stored === "string") return JSON.parse(stored);
  return stored;
}

/** `_id` of a row from its key column values (a single value, or a JSON array text for composite keys). */
export function rowId(table: TableModel, row: Record<string, unknown>): RowId {
  const [only] = table.key;
  if (only !== undefined && table.key.length === 1) return row[only] as RowId;
  return JSON.stringify(table.key.map((k) => row[k]));
}

/** The URL segment for a row's key: values URL-encoded, composite keys joined by ','. */
export function keySegment(table: TableModel, row: Record<string, unknown>): string {
  return table.key.map((k) => encodeURIComponent(String(row[k]))).join(",");
}

/** Parses the raw (still percent-encoded) key segment of a URL into typed key column values. */
export function parseKeySegment(table: TableModel, raw: string): Record<string, unknown> {
  const parts = raw.split(",");
  if (parts.length !== table.key.length) {
    throw errors.malformed(
      `The key of '${table.name}' has ${table.key.length} part(s) (${table.key.join(", ")}), separated by ','`,
    );
  }
  const values: Record<string, unknown> = {};
  table.key.forEach((k, i) => {
    const text = decodePathSegment(present(parts[i], "a key part"));
    const column = columnNamed(table, k);
    try {
      values[k] = coerceValue(column, column.type === "string" ? text : parseScalar(text), k);
    } catch {
      throw errors.malformed(`The key value for '${k}' must be a ${column.type}`);
    }
  });
  return values;
}

function parseScalar(text: string): unknown {
  if (text === "true" || text === "false") return text === "true";
  return text;
}
