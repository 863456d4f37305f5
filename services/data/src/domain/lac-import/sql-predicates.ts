/**
 * Live API Creator's SQL fragments — a role's row predicate (`"Region" =
 * '@{UserRegion}'`), a resource's filter and sort — in Tessera's filter and
 * order languages (docs/filters.md), read with node-sql-parser (ANSI quoting:
 * `"Region"` is a name). A global written as a whole value (`'@{UserRegion}'`
 * or `@{UserRegion}`) becomes Tessera's bound `@{UserRegion}`; what the filter
 * language cannot say (a comparison of two columns, a function, a global inside
 * a longer text) is answered as the reason it cannot be mapped.
 */
import type { ColumnLookup } from "./lac-code.ts";
import { columnOf, isNode, literalOf, parseSql, type SqlNode } from "./sql-ast.ts";

type Translation = { ok: true; text: string } | { ok: false; reason: string };

const KEYWORDS = new Set(["and", "or", "not", "like", "in", "is", "null", "true", "false", "asc", "desc"]);
const COMPARISONS = new Set(["=", "<>", "!=", "<", "<=", ">", ">="]);

class Untranslatable extends Error {}

/** An SQL WHERE fragment as a Tessera filter over the names `name` gives (columns or a resource's attributes). */
export function sqlFilter(predicate: string, name: ColumnLookup): Translation {
  // A bare global (outside quotes) is made a quoted one, the form the parser reads.
  const withGlobals = predicate.replace(/'(?:[^']|'')*'|@\{[^}'\s]+\}/g, (m) =>
    m.startsWith("@") ? `'${m}'` : m,
  );
  const parsed = parseSql(`SELECT * FROM t WHERE ${withGlobals}`, "postgresql");
  const select = parsed.ok ? parsed.nodes[0] : undefined;
  if (!parsed.ok || !select || parsed.nodes.length !== 1 || !isNode(select.where)) {
    return {
      ok: false,
      reason: `'${predicate}' does not read as an SQL condition${parsed.ok ? "" : ` (${parsed.error})`}`,
    };
  }
  try {
    return { ok: true, text: condition(select.where, name, true) };
  } catch (err) {
    if (err instanceof Untranslatable) return { ok: false, reason: `'${predicate}': ${err.message}` };
    throw err;
  }
}

/** An SQL ORDER BY list (`"CompanyName" asc, x desc`) as a Tessera order. */
export function sqlOrder(sorting: string, name: ColumnLookup): Translation {
  const parsed = parseSql(`SELECT * FROM t ORDER BY ${sorting}`, "postgresql");
  const select = parsed.ok ? parsed.nodes[0] : undefined;
  const items = select && Array.isArray(select.orderby) ? select.orderby.filter(isNode) : [];
  if (!parsed.ok || items.length === 0) {
    return {
      ok: false,
      reason: `'${sorting}' does not read as an SQL sort${parsed.ok ? "" : ` (${parsed.error})`}`,
    };
  }
  const keys: string[] = [];
  for (const item of items) {
    const column = columnOf(item.expr);
    const own = column === undefined ? undefined : name(column);
    if (!own)
      return {
        ok: false,
        reason: `'${sorting}': ${column ? `'${column}' is not an attribute here` : "only attributes can be sorted on"}`,
      };
    keys.push(`${quoteName(own)}${String(item.type ?? "ASC").toUpperCase() === "DESC" ? " desc" : ""}`);
  }
  return { ok: true, text: keys.join(", ") };
}

function quoteName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !KEYWORDS.has(name.toLowerCase())
    ? name
    : `"${name.replaceAll('"', '""')}"`;
}

function condition(node: SqlNode, name: ColumnLookup, top = false): string {
  const wrap = (text: string) => (top ? text : `(${text})`);
  if (node.type === "unary_expr" && String(node.operator).toUpperCase() === "NOT" && isNode(node.expr)) {
    return `not ${condition(node.expr, name)}`;
  }
  if (node.type !== "binary_expr" || !isNode(node.left))
    throw new Untranslatable(
      "only comparisons of attributes with values, joined by and / or / not, can be translated",
    );
  const op = String(node.operator).toUpperCase();
  if ((op === "AND" || op === "OR") && isNode(node.right)) {
    return wrap(`${condition(node.left, name)} ${op.toLowerCase()} ${condition(node.right, name)}`);
  }
  const attribute = attributeOf(node.left, name);
  const right = node.right;
  if (COMPARISONS.has(op)) return `${attribute} ${op} ${value(right)}`;
  if (op === "IS" || op === "IS NOT") {
    if (literalOf(right)?.kind !== "null")
      throw new Untranslatable(`${op} is followed by something other than NULL`);
    return `${attribute} ${op.toLowerCase()} null`;
  }
  if (op === "LIKE" || op === "NOT LIKE") {
    const pattern = literalOf(right);
    if (pattern?.kind !== "string") throw new Untranslatable("LIKE takes a pattern text");
    return `${attribute} ${op.toLowerCase()} ${value(right)}`;
  }
  if ((op === "IN" || op === "NOT IN") && isNode(right) && Array.isArray(right.value)) {
    return `${attribute} ${op.toLowerCase()} (${right.value.map(value).join(", ")})`;
  }
  if (op === "BETWEEN" && isNode(right) && Array.isArray(right.value) && right.value.length === 2) {
    return wrap(`${attribute} >= ${value(right.value[0])} and ${attribute} <= ${value(right.value[1])}`);
  }
  throw new Untranslatable(`the operator ${op} has no counterpart in Tessera's filter language`);
}

function attributeOf(node: SqlNode, name: ColumnLookup): string {
  const column = columnOf(node);
  if (column === undefined) throw new Untranslatable("the left side of a comparison must be an attribute");
  const own = name(column);
  if (!own) throw new Untranslatable(`'${column}' is not an attribute here`);
  return quoteName(own);
}

function value(node: unknown): string {
  if (columnOf(node) !== undefined)
    throw new Untranslatable("Tessera filters compare attributes with values, not with other attributes");
  const literal = literalOf(node);
  if (!literal)
    throw new Untranslatable(
      "only literal values and globals can be compared with (no functions or expressions)",
    );
  switch (literal.kind) {
    case "string": {
      const global = /^@\{([A-Za-z0-9_.-]+)\}$/.exec(literal.value);
      if (global) return `@{${global[1]}}`;
      if (literal.value.includes("@{"))
        throw new Untranslatable("a global inside a longer text (Tessera binds a global as a whole value)");
      return `'${literal.value.replaceAll("'", "''")}'`;
    }
    case "number":
      return literal.text;
    case "boolean":
      return String(literal.value);
    case "null":
      return "null";
  }
}
