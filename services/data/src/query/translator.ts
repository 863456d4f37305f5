/**
 * Filter AST → MongoDB query, with SQL's three-valued logic.
 *
 * Every node compiles to two queries: T ("the predicate is TRUE") and F ("it is
 * FALSE"); rows where it is UNKNOWN match neither. NOT is pushed down by swapping
 * them: T(not p) = F(p); T(a and b) = T(a) ∧ T(b), F(a and b) = F(a) ∨ F(b); T(a or b)
 * = T(a) ∨ T(b), F(a or b) = F(a) ∧ F(b). The client's filter selects T.
 *
 * Comparisons with a null (or missing) field are UNKNOWN, so each F of a comparison
 * excludes null explicitly (`$nin: [v, null]` for "differs from v"); `x = null` is
 * always UNKNOWN; `is [not] null` is two-valued. "Matches nothing" is written
 * `{_id: {$in: []}}`.
 *
 * Only the allow-listed operators of query-guard.ts are produced; keys come only
 * from the schema; user text only ever appears as an operand value or as an
 * escaped, anchored regular expression (like-regex.ts).
 */
import type { AttributeInfo, FilterNode, InNode, LikeNode, MongoQuery, QuerySchema } from "./ast.ts";
import { assertComparable, bindLiteral, type Coerced, coerce } from "./filter-values.ts";
import { LIMITS } from "./input-limits.ts";
import { exactRegex, likeToRegex } from "./like-regex.ts";
import { badQuery, type QueryLabel, show } from "./query-error.ts";
import { assertAllowedQuery } from "./query-guard.ts";
import { resolveAttribute } from "./schema.ts";

export interface CompileOptions {
  /**
   * Parameter name used in error messages ("filter", "sysfilter", "row filter", ...);
   * defaults to the `source` the parser recorded on the root node.
   */
  label?: QueryLabel;
}

/** A query, or null for "matches nothing". */
type Q = MongoQuery | null;

interface Truth {
  t: Q;
  f: Q;
}

const UNKNOWN: Truth = { t: null, f: null };

/** A query that matches no document, built from allow-listed operators only. */
export function matchNothing(): MongoQuery {
  return { _id: { $in: [] } };
}

/**
 * Compiles a filter AST to the MongoDB query selecting the rows where it is TRUE.
 * Throws 400/4002 for unknown attributes and values that do not fit the attribute's
 * type, and 403/4031 when a referenced global has no value.
 */
export function compileFilter(
  ast: FilterNode,
  schema: QuerySchema,
  globals: Record<string, unknown> = {},
  options: CompileOptions = {},
): MongoQuery {
  const compiler = new Compiler(schema, globals, options.label ?? ast.source ?? "filter");
  const query = compiler.node(ast).t ?? matchNothing();
  assertAllowedQuery(query, compiler.fields);
  return query;
}

class Compiler {
  readonly fields = new Set<string>();
  private readonly schema: QuerySchema;
  private readonly globals: Record<string, unknown>;
  private readonly label: QueryLabel;

  constructor(schema: QuerySchema, globals: Record<string, unknown>, label: QueryLabel) {
    this.schema = schema;
    this.globals = globals;
    this.label = label;
  }

  node(node: FilterNode): Truth {
    switch (node.type) {
      case "and": {
        const parts = node.items.map((item) => this.node(item));
        return { t: and(parts.map((p) => p.t)), f: or(parts.map((p) => p.f)) };
      }
      case "or": {
        const parts = node.items.map((item) => this.node(item));
        return { t: or(parts.map((p) => p.t)), f: and(parts.map((p) => p.f)) };
      }
      case "not": {
        const inner = this.node(node.item);
        return { t: inner.f, f: inner.t };
      }
      case "isNull": {
        const { field } = this.attribute(node.attr);
        const isNull = { [field]: { $eq: null } };
        const notNull = { [field]: { $ne: null } };
        return node.negated ? { t: notNull, f: isNull } : { t: isNull, f: notNull };
      }
      case "compare":
        return this.compare(node);
      case "like":
        return this.like(node);
      case "in":
        return this.in(node);
    }
  }

  private attribute(attr: { name: string; pos: number }): AttributeInfo {
    const info = resolveAttribute(this.schema, attr, this.label);
    this.fields.add(info.field);
    return info;
  }

  private compare(node: Extract<FilterNode, { type: "compare" }>): Truth {
    const info = this.attribute(node.attr);
    assertComparable(info, node.attr.name, node.pos, this.label);
    const bound = bindLiteral(node.value, this.globals);
    if (bound === null) return UNKNOWN; // x op null is UNKNOWN for every row
    const value = coerce(bound, node.attr.name, info, node.value.pos, this.label);
    const f = info.field;
    if (node.upper && info.type === "string") {
      if (node.op !== "=" && node.op !== "<>") {
        throw badQuery(
          this.label,
          node.pos,
          `case-insensitive (_uc) ${opName(node.op)} comparison of text attribute ${show(node.attr.name)} ` +
            "is not supported; only equal, notequal, like and notlike can ignore case",
        );
      }
      const equal = regexTruth(f, exactRegex(String(value)), "i");
      return node.op === "=" ? equal : swap(equal);
    }
    switch (node.op) {
      case "=":
        return { t: { [f]: { $eq: value } }, f: { [f]: { $nin: [value, null] } } };
      case "<>":
        return { t: { [f]: { $nin: [value, null] } }, f: { [f]: { $eq: value } } };
      case "<":
        return { t: { [f]: { $lt: value } }, f: { [f]: { $gte: value } } };
      case "<=":
        return { t: { [f]: { $lte: value } }, f: { [f]: { $gt: value } } };
      case ">":
        return { t: { [f]: { $gt: value } }, f: { [f]: { $lte: value } } };
      case ">=":
        return { t: { [f]: { $gte: value } }, f: { [f]: { $lt: value } } };
    }
  }

  private like(node: LikeNode): Truth {
    const info = this.attribute(node.attr);
    if (info.type !== "string") {
      throw badQuery(
        this.label,
        node.pos,
        `like needs a string attribute; ${show(node.attr.name)} is ${info.type === "integer" ? "an" : "a"} ${info.type}`,
      );
    }
    const { source, wildcards } = likeToRegex(node.pattern.value);
    if (wildcards > LIMITS.maxLikeWildcards) {
      throw badQuery(
        this.label,
        node.pattern.pos,
        `like pattern has more than ${LIMITS.maxLikeWildcards} '%' wildcards`,
      );
    }
    const truth = regexTruth(info.field, source, node.upper ? "i" : "");
    return node.negated ? swap(truth) : truth;
  }

  private in(node: InNode): Truth {
    const info = this.attribute(node.attr);
    assertComparable(info, node.attr.name, node.pos, this.label);
    const values: Coerced[] = [];
    let hasNull = false;
    for (const literal of node.values) {
      const bound = bindLiteral(literal, this.globals);
      if (bound === null) hasNull = true;
      else values.push(coerce(bound, node.attr.name, info, literal.pos, this.label));
    }
    const f = info.field;
    // x in (a, b, null): TRUE when x is a or b, otherwise UNKNOWN (never FALSE).
    const truth: Truth = {
      t: values.length > 0 ? { [f]: { $in: values } } : null,
      f: hasNull ? null : { [f]: { $nin: [...values, null] } },
    };
    return node.negated ? swap(truth) : truth;
  }
}

/** TRUE: the string field matches; FALSE: it is not null and does not match. */
function regexTruth(field: string, source: string, flags: "" | "i"): Truth {
  const t: MongoQuery = { [field]: flags ? { $regex: source, $options: flags } : { $regex: source } };
  // A RegExp inside $nin means "does not match"; its source is exactly `source`
  // (like-regex.ts only emits text that JavaScript keeps verbatim in RegExp.source).
  const f: MongoQuery = { [field]: { $nin: [new RegExp(source, flags), null] } };
  return { t, f };
}

function swap(truth: Truth): Truth {
  return { t: truth.f, f: truth.t };
}

function opName(op: string): string {
  return { "<": "less", "<=": "lessequal", ">": "greater", ">=": "greaterequal" }[op] ?? op;
}

/** Conjunction; null (nothing) if any part is nothing. Flattens nested $and. */
function and(parts: Q[]): Q {
  const items: MongoQuery[] = [];
  for (const part of parts) {
    if (part === null) return null;
    if (isOnly(part, "$and")) items.push(...(part.$and as MongoQuery[]));
    else items.push(part);
  }
  const [first] = items;
  return first && items.length === 1 ? first : { $and: items };
}

/** Disjunction; parts that match nothing drop out; null if all do. Flattens nested $or. */
function or(parts: Q[]): Q {
  const items: MongoQuery[] = [];
  for (const part of parts) {
    if (part === null) continue;
    if (isOnly(part, "$or")) items.push(...(part.$or as MongoQuery[]));
    else items.push(part);
  }
  const [first] = items;
  if (!first) return null;
  return items.length === 1 ? first : { $or: items };
}

function isOnly(query: MongoQuery, key: "$and" | "$or"): boolean {
  const keys = Object.keys(query);
  return keys.length === 1 && keys[0] === key;
}
