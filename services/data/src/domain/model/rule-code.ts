/**
 * A rule's JavaScript (an expression, a `where`, or event code), parsed once
 * with acorn: whether it parses (the first syntax error, with its line and
 * column), the function body the rule program compiles, and what the code
 * reads from `row` and `oldRow`.
 *
 * Reads are found in the syntax tree, so text in strings, comments, regular
 * expressions and other objects' properties (`x.row`, `{row: 1}`) never
 * counts. `row.x` and `row["x"]` read the attribute (or parent role) `x`;
 * `row.role.x` and `row.role["x"]` read `x` of that parent. Any other use of
 * `row` (passed to a function, iterated, indexed by a computed name, declared
 * again) marks the code `dynamic`: it may read anything.
 */
import { getLineInfo, type Node, type Options, parse, parseExpressionAt } from "acorn";

export interface RowRefs {
  /** `row.<name>` and `row["<name>"]`: an own attribute or a parent role. */
  names: Set<string>;
  /** `row.<role>.<attr>`: keyed by the first name, the attributes read through it. */
  nested: Map<string, Set<string>>;
  /** First names used other than as `row.<name>.<attr>` (the parent object itself, or an own column). */
  whole: Set<string>;
  /**
   * Every static member chain read from the variable, outermost name first:
   * `row.order.customer.region` → `["order", "customer", "region"]`. An
   * assignment target keeps only the chain up to the object assigned to
   * (`row.a.b = 1` → `["a"]`, `row.x = 1` → `["x"]`).
   */
  chains: string[][];
  /** `row` used in a way this analysis cannot follow. */
  dynamic: boolean;
}

export interface ParsedRuleCode {
  /** Body of the rule's function `(row, oldRow, logicContext)`: an expression is returned. */
  body: string;
  row: RowRefs;
  oldRow: RowRefs;
}

/** `expression`: a JavaScript expression, or a function body that returns; `code`: a function body. */
export type CodeKind = "expression" | "code";

export type RuleCodeParse = { ok: true; code: ParsedRuleCode } | { ok: false; error: string };

const OPTIONS: Options = {
  ecmaVersion: "latest",
  sourceType: "script",
  allowReturnOutsideFunction: true,
  allowAwaitOutsideFunction: false,
};

/**
 * The first syntax error of `source` as the body of an async function (where
 * `await` and `return` may appear at the top), with its line and column; undefined
 * when it parses.
 */
export function asyncBodySyntaxError(source: string): string | undefined {
  try {
    parse(source, { ...OPTIONS, allowAwaitOutsideFunction: true });
    return undefined;
  } catch (err) {
    return syntaxMessage(source, err);
  }
}

/** The first syntax error of `source` as a script (a library), with its line and column; undefined when it parses. */
export function scriptSyntaxError(source: string): string | undefined {
  try {
    parse(source, { ecmaVersion: "latest", sourceType: "script" });
    return undefined;
  } catch (err) {
    return syntaxMessage(source, err);
  }
}

export function parseRuleCode(source: string, kind: CodeKind): RuleCodeParse {
  if (kind === "expression") {
    const expression = parseWholeExpression(source);
    if ("node" in expression) return parsed(`return (${source}\n);`, expression.node);
    const body = parseBody(source);
    if ("node" in body) return parsed(source, body.node);
    return { ok: false, error: /\breturn\b/.test(source) ? body.error : expression.error };
  }
  const body = parseBody(source);
  return "node" in body ? parsed(source, body.node) : { ok: false, error: body.error };
}

function parsed(body: string, tree: Node): RuleCodeParse {
  return { ok: true, code: { body, row: readsOf(tree, "row"), oldRow: readsOf(tree, "oldRow") } };
}

type Attempt = { node: Node } | { error: string };

function parseBody(source: string): Attempt {
  try {
    return { node: parse(source, OPTIONS) };
  } catch (err) {
    return { error: syntaxMessage(source, err) };
  }
}

/** The source as one expression, with nothing but whitespace and comments after it. */
function parseWholeExpression(source: string): Attempt {
  let node: Node;
  try {
    node = parseExpressionAt(source, 0, OPTIONS);
  } catch (err) {
    return { error: syntaxMessage(source, err) };
  }
  let extra: number | undefined;
  try {
    const rest = parse(source.slice(node.end), OPTIONS);
    const next = rest.body[0];
    if (next) extra = node.end + next.start;
  } catch (err) {
    extra = node.end + (errorPosition(err) ?? 0);
  }
  return extra === undefined ? { node } : { error: `Unexpected token${at(source, extra)}` };
}

/** acorn's message, with the position as line and column counted from 1. */
function syntaxMessage(source: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const pos = errorPosition(err);
  return pos === undefined ? message : `${message.replace(/ \(\d+:\d+\)$/, "")}${at(source, pos)}`;
}

function at(source: string, offset: number): string {
  const { line, column } = getLineInfo(source, offset);
  return ` at line ${line}, column ${column + 1}`;
}

function errorPosition(err: unknown): number | undefined {
  const pos = (err as { pos?: unknown } | null)?.pos;
  return typeof pos === "number" ? pos : undefined;
}

type AnyNode = Node & Record<string, unknown>;

function isNode(value: unknown): value is AnyNode {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}

/** Identifiers in these places are names, not reads of a variable. */
function isNameOnly(parent: AnyNode | undefined, key: string): boolean {
  if (!parent) return false;
  switch (parent.type) {
    case "MemberExpression":
      return key === "property" && parent.computed !== true;
    case "Property":
    case "MethodDefinition":
    case "PropertyDefinition":
      return key === "key" && parent.computed !== true;
    case "LabeledStatement":
    case "BreakStatement":
    case "ContinueStatement":
      return key === "label";
    case "MetaProperty":
      return true;
    default:
      return false;
  }
}

/** `name` of `object.name` / `object["name"]` when `member` reads a fixed property of `object`. */
function memberName(member: AnyNode | undefined, object: AnyNode): string | undefined {
  if (member?.type !== "MemberExpression" || member.object !== object) return undefined;
  const property = member.property as AnyNode;
  if (member.computed !== true) return property.type === "Identifier" ? String(property.name) : undefined;
  return property.type === "Literal" && typeof property.value === "string" ? property.value : undefined;
}

/** What the code reads from the variable `variable`. */
function readsOf(tree: Node, variable: string): RowRefs {
  const refs: RowRefs = {
    names: new Set(),
    nested: new Map(),
    whole: new Set(),
    chains: [],
    dynamic: false,
  };
  const ancestors: AnyNode[] = [];
  const visit = (node: AnyNode, key: string): void => {
    if (node.type === "Identifier" && node.name === variable && !isNameOnly(ancestors.at(-1), key)) {
      read(refs, node, ancestors);
    }
    ancestors.push(node);
    for (const [childKey, value] of Object.entries(node)) {
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) visit(item, childKey);
      } else if (isNode(value)) visit(value, childKey);
    }
    ancestors.pop();
  };
  visit(tree as AnyNode, "");
  return refs;
}

/** One read of the variable: `row.a`, `row.a.b`, or something that cannot be followed. */
function read(refs: RowRefs, variable: AnyNode, ancestors: AnyNode[]): void {
  const first = ancestors.at(-1);
  const firstName = memberName(first, variable);
  if (firstName === undefined || !first) {
    refs.dynamic = true;
    return;
  }
  refs.names.add(firstName);
  refs.chains.push(chainOf(variable, ancestors));
  const second = ancestors.at(-2);
  const secondName = memberName(second, first);
  const assigned = ancestors.at(-3);
  const isAssignedTo =
    assigned?.type === "AssignmentExpression" && assigned.operator === "=" && assigned.left === second;
  if (secondName === undefined || isAssignedTo) {
    refs.whole.add(firstName);
    return;
  }
  let set = refs.nested.get(firstName);
  if (!set) {
    set = new Set();
    refs.nested.set(firstName, set);
  }
  set.add(secondName);
}

/** The static member chain read from `variable` (at least one name: the caller checked `row.<name>`). */
function chainOf(variable: AnyNode, ancestors: AnyNode[]): string[] {
  const chain: string[] = [];
  let object = variable;
  let depth = ancestors.length - 1;
  for (;;) {
    const member = ancestors[depth];
    const name = memberName(member, object);
    if (name === undefined || !member) break;
    chain.push(name);
    object = member;
    depth--;
  }
  const parent = ancestors[depth];
  const assigned =
    parent?.type === "AssignmentExpression" && parent.operator === "=" && parent.left === object;
  if (assigned && chain.length > 1) chain.length = 1;
  return chain;
}
