/**
 * Binding and coercion of filter values: `@{global}` lookup in the key's globals,
 * then conversion of every value to the type of the attribute it is compared with
 * (MongoDB only compares values of the same BSON type class, so `'5'` must become
 * 5 for a number column). A value that cannot be converted is a 400/4002.
 */
import { ApiError, ErrorCode } from "../../../../shared/errors.ts";
import type { AttributeInfo, Literal } from "./ast.ts";
import { badQuery, type QueryLabel, show } from "./query-error.ts";

/** A bound value before coercion; null is SQL NULL. `global` names the global it came from. */
export type Scalar =
  | ((
      | { type: "string"; value: string }
      | { type: "number"; value: number; text: string }
      | { type: "boolean"; value: boolean }
      | { type: "date"; value: Date }
    ) & { global?: string })
  | null;

/** A value ready to be placed in a MongoDB query (never an object with keys). */
export type Coerced = string | number | boolean | Date;

const NUMBER_TEXT = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_TEXT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:\d{2})?$/i;

/**
 * Looks a global up: first as a flat key (`"_apikey.user_identifier"`), then as a
 * dotted path through nested objects. Own properties only.
 */
export function lookupGlobal(globals: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(globals, name)) return globals[name];
  let current: unknown = globals;
  for (const part of name.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** Binds a literal: globals are looked up (missing → 403/4031), others pass through. */
export function bindLiteral(literal: Literal, globals: Record<string, unknown>): Scalar {
  switch (literal.kind) {
    case "null":
      return null;
    case "string":
      return { type: "string", value: literal.value };
    case "number":
      return { type: "number", value: literal.value, text: literal.text };
    case "boolean":
      return { type: "boolean", value: literal.value };
    case "global":
      return bindGlobal(literal.name, lookupGlobal(globals, literal.name));
  }
}

function bindGlobal(name: string, value: unknown): Scalar {
  if (value === undefined || value === null) {
    throw new ApiError(403, ErrorCode.forbidden, `required global ${name} has no value`);
  }
  const global = name;
  if (typeof value === "string") return { type: "string", value, global };
  if (typeof value === "boolean") return { type: "boolean", value, global };
  if (typeof value === "number" && Number.isFinite(value)) {
    return { type: "number", value, text: String(value), global };
  }
  if (typeof value === "bigint" && Number.isSafeInteger(Number(value))) {
    return { type: "number", value: Number(value), text: String(value), global };
  }
  if (value instanceof Date && !Number.isNaN(value.getTime())) return { type: "date", value, global };
  throw new ApiError(403, ErrorCode.forbidden, `global ${name} has a value that cannot be used in a filter`);
}

/** Converts a bound, non-null value to the attribute's type, or throws 400/4002. */
export function coerce(
  value: Exclude<Scalar, null>,
  attrName: string,
  info: AttributeInfo,
  pos: number,
  label: QueryLabel,
): Coerced {
  assertComparable(info, attrName, pos, label);
  const fail = (): never => {
    // a global's value is not echoed: it may come from the key's user data
    let what: string;
    if (value.global !== undefined) what = `the value of global @{${value.global}}`;
    else if (value.type === "string") what = show(value.value);
    else what = String(value.value);
    throw badQuery(label, pos, `${what} cannot be compared with ${info.type} attribute ${show(attrName)}`);
  };

  switch (info.type) {
    case "string":
      if (value.type === "string") return value.value;
      if (value.type === "number") return value.text;
      return fail();
    case "number":
    case "integer":
      if (value.type === "number") return value.value;
      if (value.type === "string" && NUMBER_TEXT.test(value.value)) {
        const n = Number(value.value);
        if (Number.isFinite(n)) return Object.is(n, -0) ? 0 : n;
      }
      return fail();
    case "boolean":
      if (value.type === "boolean") return value.value;
      if (value.type === "string" && /^(true|false)$/i.test(value.value))
        return value.value.toLowerCase() === "true";
      if (value.type === "number" && (value.value === 0 || value.value === 1)) return value.value === 1;
      return fail();
    case "date": {
      const day =
        value.type === "date"
          ? inRange(value.value.getTime())
            ? value.value.toISOString().slice(0, 10)
            : undefined
          : dateText(value);
      if (day === undefined) return fail();
      return info.storedAs === "date" ? new Date(`${day}T00:00:00.000Z`) : day;
    }
    case "datetime": {
      const instant =
        value.type === "date"
          ? inRange(value.value.getTime())
            ? value.value
            : undefined
          : datetimeValue(value);
      if (instant === undefined) return fail();
      return info.storedAs === "date" ? instant : instant.toISOString();
    }
    case "json":
      return fail();
  }
}

/** json attributes can only be tested with `is [not] null`; anything else is a 400/4002. */
export function assertComparable(
  info: AttributeInfo,
  attrName: string,
  pos: number,
  label: QueryLabel,
): void {
  if (info.type === "json") {
    throw badQuery(
      label,
      pos,
      `json attribute ${show(attrName)} can only be tested with 'is null' or 'is not null'`,
    );
  }
}

/** Milliseconds since the epoch for a UTC calendar time, or undefined when a field is out of range. */
function utcMillis(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number | undefined {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d); // unlike Date.UTC, keeps years 0..99 as written
  date.setUTCHours(h, mi, s, ms);
  return date.getUTCDate() === d ? date.getTime() : undefined;
}

/** Years 0..9999 only, so that the ISO form keeps its fixed width. */
function inRange(ms: number): boolean {
  const year = new Date(ms).getUTCFullYear();
  return year >= 0 && year <= 9999;
}

function dateText(value: Exclude<Scalar, null>): string | undefined {
  if (value.type !== "string") return undefined;
  const m = DATE_TEXT.exec(value.value);
  if (!m) return undefined;
  return utcMillis(Number(m[1]), Number(m[2]), Number(m[3])) === undefined ? undefined : value.value;
}

/** `YYYY-MM-DD[THH:mm[:ss[.fraction]]][Z|±HH:MM]`; no zone means UTC (the wire format has none). */
function datetimeValue(value: Exclude<Scalar, null>): Date | undefined {
  if (value.type !== "string") return undefined;
  const m = DATETIME_TEXT.exec(value.value);
  if (!m) return undefined;
  const part = (group: number) => Number(m[group] ?? 0);
  const millis = Number((m[7] ?? "").padEnd(3, "0").slice(0, 3));
  const local = utcMillis(part(1), part(2), part(3), part(4), part(5), part(6), millis);
  if (local === undefined) return undefined;
  let offset = 0;
  const zone = m[8];
  if (zone && zone.toUpperCase() !== "Z") {
    const sign = zone[0] === "-" ? -1 : 1;
    // `±HH:MM`, as DATETIME_TEXT matched it.
    const zh = Number(zone.slice(1, 3));
    const zm = Number(zone.slice(4, 6));
    if (zh > 23 || zm > 59) return undefined;
    offset = sign * (zh * 60 + zm) * 60_000;
  }
  const instant = local - offset;
  return inRange(instant) ? new Date(instant) : undefined;
}
