/**
 * Filter AST → MongoDB query, with SQL's three-valued logic; and, from the same walk, the
 * same condition evaluated on a row in this process (conditions.ts: each query part and its
 * test come from one constructor).
 *
 * Every node compiles to two conditions: T ("the predicate is TRUE") and F ("it is
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
import {
  allOf,
  anyOf,
  type Condition,
  equal,
  matching,
  noneOf,
  notEqual,
  nothing,
  notMatchingNorNull,
  oneOf,
  type Pattern,
  range,
} from "./conditions.ts";
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

/** A condition, or null for "matches nothing". */
type Q = Condition | null;

interface Truth {
  t: Q;
  f: Q;
}

const UNKNOWN: Truth = { t: null, f: null };

/** A query that matches no document, built from allow-listed operators only. */
export function matchNothing(): MongoQuery {
  return nothing().query;
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
  return compileCondition(ast, schema, globals, options).query;
}

/**
 * Compiles a filter AST to the condition selecting the rows where it is TRUE: the store's query
 * (as compileFilter) and, made by the same constructors from the same bound values, its test on a
 * row in this process (conditions.ts). Throws as compileFilter does.
 */
export function compileCondition(
  ast: FilterNode,
  schema: QuerySchema,
  globals: Record<string, unknown> = {},
  options: CompileOptions = {},
): Condition {
  const compiler = new Compiler(schema, globals, options.label ?? ast.source ?? "filter");
  const condition = compiler.node(ast).t ?? nothing();
  assertAllowedQuery(condition.query, compiler.fields);
  return condition;
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
        const isNull = equal(field, null);
        const notNull = notEqual(field, null);
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
      const same = regexTruth(f, { regex: exactRegex(String(value)), caseInsensitive: true });
      return node.op === "=" ? same : swap(same);
    }
    switch (node.op) {
      case "=":
        return { t: equal(f, value), f: noneOf(f, [value, null]) };
      case "<>":
        return { t: noneOf(f, [value, null]), f: equal(f, value) };
      case "<":
        return { t: range(f, "$lt", value), f: range(f, "$gte", value) };
      case "<=":
        return { t: range(f, "$lte", value), f: range(f, "$gt", value) };
      case ">":
        return { t: range(f, "$gt", value), f: range(f, "$lte", value) };
      case ">=":
        return { t: range(f, "$gte", value), f: range(f, "$lt", value) };
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
    const regex = likeToRegex(node.pattern.value);
    const { wildcards } = regex;
    if (wildcards > LIMITS.maxLikeWildcards) {
      throw badQuery(
        this.label,
        node.pattern.pos,
        `like pattern has more than ${LIMITS.maxLikeWildcards} '%' wildcards`,
      );
    }
    const truth = regexTruth(info.field, { regex, caseInsensitive: node.upper });
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
      t: values.length > 0 ? oneOf(f, values) : null,
      f: hasNull ? null : noneOf(f, [...values, null]),
    };
    return node.negated ? swap(truth) : truth;
  }
}

/** TRUE: the string field matches; FALSE: it is not null and does not match. */
function regexTruth(field: string, pattern: Pattern): Truth {
  return { t: matching(field, pattern), f: notMatchingNorNull(field, pattern) };
}

function swap(truth: Truth): Truth {
  return { t: truth.f, f: truth.t };
}

function opName(op: string): string {
  return { "<": "less", "<=": "lessequal", ">": "greater", ">=": "greaterequal" }[op] ?? op;
}

/** Conjunction; null (nothing) if any part is nothing. */
function and(parts: Q[]): Q {
  const items: Condition[] = [];
  for (const part of parts) {
    if (part === null) return null;
    items.push(part);
  }
  return allOf(items);
}

/** Disjunction; parts that match nothing drop out; null if all do. */
function or(parts: Q[]): Q {
  const items = parts.filter((part): part is Condition => part !== null);
  return items.length === 0 ? null : anyOf(items);
}
