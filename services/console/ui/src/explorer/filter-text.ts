/**
 * Writes conditions and sort keys in the filter language (docs/filters.md): names quoted
 * when they are not bare words, values as literals of the attribute's type.
 */
const BARE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KEYWORDS = new Set(["and", "or", "not", "like", "in", "is", "null", "true", "false", "asc", "desc"]);

export function nameText(name: string): string {
  return BARE.test(name) && !KEYWORDS.has(name.toLowerCase()) ? name : `"${name.replaceAll('"', '""')}"`;
}

export function stringText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export function literalText(type: string, text: string): string {
  if ((type === "number" || type === "integer") && NUMBER.test(text.trim())) return text.trim();
  if (type === "boolean" && /^(true|false)$/i.test(text.trim())) return text.trim().toLowerCase();
  return stringText(text);
}

export const OPERATORS = [
  "=",
  "<>",
  "<",
  "<=",
  ">",
  ">=",
  "like",
  "not like",
  "is null",
  "is not null",
] as const;
export type Operator = (typeof OPERATORS)[number];

/** Operators an attribute of this type can be tested with (json: only null or not). */
export function operatorsFor(type: string): readonly Operator[] {
  if (type === "json") return ["is null", "is not null"];
  if (type === "boolean") return ["=", "<>", "is null", "is not null"];
  if (type === "string") return OPERATORS;
  return OPERATORS.filter((o) => !o.includes("like"));
}

export const takesValue = (op: Operator) => !op.endsWith("null");

export function conditionText(name: string, type: string, op: Operator, value: string): string {
  if (!takesValue(op)) return `${nameText(name)} ${op}`;
  return `${nameText(name)} ${op} ${op.includes("like") ? stringText(value) : literalText(type, value)}`;
}

/** The filter with one more condition ANDed to it (an `or` in it is kept together). */
export function andCondition(filter: string, condition: string): string {
  const f = filter.trim();
  if (!f) return condition;
  return /\bor\b/i.test(f) ? `(${f}) and ${condition}` : `${f} and ${condition}`;
}

/** The sort of the order's first key, when it is `name`. */
export function sortOf(order: string, name: string): "ascending" | "descending" | undefined {
  const m = /^\s*("(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_]*)(?:\s+(asc|desc))?\s*(,|$)/i.exec(order);
  if (!m) return undefined;
  const word = m[1] ?? "";
  const first = word.startsWith('"') ? word.slice(1, -1).replaceAll('""', '"') : word;
  if (first !== name) return undefined;
  return m[2]?.toLowerCase() === "desc" ? "descending" : "ascending";
}

/** Clicking a column's header: ascending, then descending, then the default order again. */
export function nextOrder(order: string, name: string): string {
  const now = sortOf(order, name);
  if (now === undefined) return `${nameText(name)} asc`;
  if (now === "ascending") return `${nameText(name)} desc`;
  return "";
}
