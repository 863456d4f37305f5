/**
 * node-sql-parser's syntax trees, read through a few guarded helpers: the
 * library's trees differ by dialect (a column is `"id"` or `{expr: {value}}`, a
 * string keeps its doubled quotes), so every reader here takes `unknown` and
 * answers `undefined` for a shape it does not know.
 */
import sqlParser from "node-sql-parser";

/** Dialects the schema and data may be written in (node-sql-parser's names). */
export const SQL_DIALECTS = ["mysql", "mariadb", "postgresql", "sqlite", "transactsql", "db2"] as const;
export type SqlDialect = (typeof SQL_DIALECTS)[number];

const parser = new sqlParser.Parser();

export type SqlNode = Record<string, unknown>;

export function isNode(value: unknown): value is SqlNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The statements of one SQL text, or the parser's message. */
export function parseSql(
  text: string,
  dialect: SqlDialect,
): { ok: true; nodes: SqlNode[] } | { ok: false; error: string } {
  try {
    const ast = parser.astify(text, { database: dialect });
    const nodes = ((Array.isArray(ast) ? ast : [ast]) as unknown[]).filter(isNode);
    return { ok: true, nodes };
  } catch (err) {
    return { ok: false, error: syntaxError(err) };
  }
}

/** A name as written: a plain string, or `{expr: {value}}`, or `{value}`. */
export function nameOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (!isNode(value)) return undefined;
  if (typeof value.value === "string") return value.value;
  if (isNode(value.expr)) return nameOf(value.expr);
  return undefined;
}

/** The column of a `column_ref`. */
export function columnOf(ref: unknown): string | undefined {
  return isNode(ref) && ref.type === "column_ref" ? nameOf(ref.column) : undefined;
}

/** The table of a `[{db, table}]` list's first entry. */
export function tableOf(list: unknown): string | undefined {
  const first = Array.isArray(list) ? list[0] : undefined;
  return isNode(first) && typeof first.table === "string" ? first.table : undefined;
}

export type SqlLiteral =
  | { kind: "string"; value: string }
  | { kind: "number"; value: number; text: string }
  | { kind: "boolean"; value: boolean }
  | { kind: "null" };

/** A literal value (a string with its doubled quotes undone, a signed number), or undefined for anything else. */
export function literalOf(node: unknown): SqlLiteral | undefined {
  if (!isNode(node)) return undefined;
  switch (node.type) {
    case "single_quote_string":
    case "string":
    case "natural_string":
      return typeof node.value === "string"
        ? { kind: "string", value: node.value.replaceAll("''", "'") }
        : undefined;
    case "number": {
      const text = String(node.value);
      const value = Number(text);
      return Number.isFinite(value) ? { kind: "number", value, text } : undefined;
    }
    case "bool":
      return typeof node.value === "boolean" ? { kind: "boolean", value: node.value } : undefined;
    case "null":
      return { kind: "null" };
    case "unary_expr": {
      const inner = node.operator === "-" ? literalOf(node.expr) : undefined;
      return inner?.kind === "number"
        ? { kind: "number", value: -inner.value, text: `-${inner.text}` }
        : undefined;
    }
    default:
      return undefined;
  }
}

/** The parser's complaint in a few words: where, and what it found there (its "Expected …" list is long). */
function syntaxError(err: unknown): string {
  if (!isNode(err)) return String(err);
  const start = isNode(err.location) && isNode(err.location.start) ? err.location.start : undefined;
  if (start && typeof start.line === "number" && typeof start.column === "number") {
    const found = typeof err.found === "string" ? `'${err.found}'` : "the end";
    return `unexpected ${found} at line ${start.line}, column ${start.column} of the statement`;
  }
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}
