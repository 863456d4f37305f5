/**
 * How the store's query operators treat the values of a row — MongoDB's rules, which FerretDB
 * follows — for the operators Tessera's queries use ($eq, $ne, $lt, $lte, $gt, $gte, $in, $nin,
 * $regex), so that a condition can be evaluated on a row in this process exactly as the store
 * evaluates it (query/conditions.ts):
 *
 * - A missing field counts as null for equality (`{f: {$eq: null}}` matches it); every other
 *   operator finds nothing in it.
 * - Values compare only within one type class (type bracketing): numbers with numbers (by value,
 *   whatever their BSON type), strings with strings (by Unicode code point: the store compares
 *   UTF-8 bytes), booleans (false < true), dates (by instant). `5 < '6'` is neither true nor false:
 *   the row matches neither `$lt` nor `$gte`.
 * - A field holding an array matches when the whole array or one of its elements does (rows hold
 *   none: json columns are stored as text; this keeps the rule whole all the same).
 * - `$regex` matches strings only.
 */

/** MongoDB's canonical type order of the classes rows can hold; undefined for others. */
function typeClass(value: unknown): number | undefined {
  if (value === null || value === undefined) return 5;
  switch (typeof value) {
    case "number":
    case "bigint":
      return 10;
    case "string":
      return 15;
    case "boolean":
      return 40;
  }
  if (value instanceof Date) return 45;
  return undefined;
}

/** Code point order of two strings (JavaScript's `<` compares UTF-16 units, which differs above U+D7FF). */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Surrogates (U+D800–U+DFFF, the halves of code points above U+FFFF) sort after U+E000–U+FFFF. */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}

/**
 * Compares two scalar values of one type class; undefined when their classes differ or are not
 * ordered here (such values never satisfy a comparison).
 */
export function compareValues(a: unknown, b: unknown): number | undefined {
  const ca = typeClass(a);
  if (ca === undefined || ca !== typeClass(b)) return undefined;
  switch (ca) {
    case 5:
      return 0;
    case 10: {
      const x = Number(a);
      const y = Number(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 15:
      return compareStrings(a as string, b as string);
    case 40:
      return Number(a) - Number(b);
    case 45:
      return (a as Date).getTime() - (b as Date).getTime();
  }
  return undefined;
}

/** The values a field offers to an operator: an array's elements and the array itself; else the value. */
function candidates(value: unknown): unknown[] {
  return Array.isArray(value) ? [...value, value] : [value];
}

function equalScalar(value: unknown, operand: unknown): boolean {
  if (operand instanceof RegExp) return typeof value === "string" && matchesRegExp(operand, value);
  if (operand === null) return value === null || value === undefined;
  return compareValues(value, operand) === 0;
}

function matchesRegExp(pattern: RegExp, text: string): boolean {
  pattern.lastIndex = 0;
  return pattern.test(text);
}

/** `{f: {$eq: operand}}` (a RegExp operand, as inside `$in`/`$nin`, matches strings it matches). */
export function equalsOperand(value: unknown, operand: unknown): boolean {
  if (operand === null && Array.isArray(value)) return value.some((v) => v === null || v === undefined);
  return candidates(value).some((v) => equalScalar(v, operand));
}

/** `{f: {$in: operands}}`; `$nin` is its negation. */
export function inOperands(value: unknown, operands: readonly unknown[]): boolean {
  return operands.some((operand) => equalsOperand(value, operand));
}

export type RangeOperator = "$lt" | "$lte" | "$gt" | "$gte";

/** `{f: {$lt: operand}}` and the other ordering operators. */
export function satisfiesRange(value: unknown, op: RangeOperator, operand: unknown): boolean {
  return candidates(value).some((v) => {
    if (v === null || v === undefined) return false;
    const order = compareValues(v, operand);
    if (order === undefined) return false;
    switch (op) {
      case "$lt":
        return order < 0;
      case "$lte":
        return order <= 0;
      case "$gt":
        return order > 0;
      default:
        return order >= 0;
    }
  });
}

/** `{f: {$regex: …}}` with the same expression as `pattern` (strings only). */
export function matchesPattern(value: unknown, pattern: RegExp): boolean {
  return candidates(value).some((v) => typeof v === "string" && matchesRegExp(pattern, v));
}
