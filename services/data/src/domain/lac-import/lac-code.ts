/**
 * Live API Creator's JavaScript (rule code, event handlers, JavaScript
 * resources) read with acorn, to carry it over as it is where Tessera's sandbox
 * offers what it uses, and to say what it uses that the sandbox does not:
 *
 * - `row`, `oldRow`, `logicContext.verb` / `initialVerb` / `insert(table, values)` are Tessera's too;
 * - `log.debug(…)` (and `info`, `warn`, `error`, `finest`, …) go to `console.log` through a
 *   library the import adds (`LAC_LOG_LIBRARY`);
 * - `SysUtility`, Java (`java.*`, `Packages`, `JavaAdapter`), `logicContext.createPersistentBean`,
 *   `getBeanByPrimaryKey`, `touch`, `logicContext.insert(bean)` and the rest of LAC's
 *   `logicContext` have no counterpart: such code is reported and left out.
 *
 * Also: a sum's or count's qualification (`null === ShippedDate`, written over the
 * child's attributes) as Tessera's `where` over `row`, a validation message's
 * `{Balance|#,##0.00}` as `{Balance}`, and an event's `verbs` as a guard.
 */
import { type Node, parse, parseExpressionAt } from "acorn";

const OPTIONS = { ecmaVersion: "latest", sourceType: "script", allowReturnOutsideFunction: true } as const;

/** What a script uses, by name: free identifiers and `object.property` pairs of those. */
interface Uses {
  identifiers: Set<string>;
  members: Set<string>;
}

/** Members of LAC's logicContext Tessera's has (rules.md "What rule code sees"). */
const LOGIC_CONTEXT_MEMBERS = new Set(["verb", "initialVerb"]);
/** Globals LAC offered that Tessera's sandbox does not. */
const LAC_GLOBALS = [
  "SysUtility",
  "java",
  "javax",
  "Packages",
  "JavaAdapter",
  "importPackage",
  "importClass",
  "MongoClient",
  "listenerUtil",
];

export const LAC_LOG_LIBRARY = "lac_log";
/** LAC's `log` object as Tessera library code: every level goes to `console.log` (the service's debug log). */
export const LAC_LOG_CODE = [
  "// Live API Creator's log object, for code imported from it: every level goes to console.log.",
  "var log = (function () {",
  "  function write() { console.log.apply(console, arguments); }",
  "  return { trace: write, finest: write, finer: write, fine: write, debug: write, info: write, warn: write, error: write };",
  "})();",
  "",
].join("\n");

/** A table's Tessera column for a name LAC wrote (any letter case), or undefined. */
export type ColumnLookup = (name: string) => string | undefined;

export type CodeVerdict = { ok: true; usesLog: boolean } | { ok: false; reason: string };

/**
 * Whether code LAC ran can run as it is in Tessera's sandbox; `extraGlobals`
 * are names the code is given there besides its own (`request`, `principal`).
 */
export function judgeCode(source: string, lacOnlyGlobals: readonly string[] = []): CodeVerdict {
  let tree: Node;
  try {
    tree = parse(source, OPTIONS);
  } catch (err) {
    return {
      ok: false,
      reason: `it does not parse as JavaScript: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  const uses = usesOf(tree);
  const missing = [...LAC_GLOBALS, ...lacOnlyGlobals].filter((g) => uses.identifiers.has(g));
  const logic = [...uses.members]
    .filter((m) => m.startsWith("logicContext."))
    .map((m) => m.slice("logicContext.".length))
    .filter((m) => !LOGIC_CONTEXT_MEMBERS.has(m) && m !== "insert");
  if (uses.members.has("logicContext.insert") && usesBeanInsert(tree)) logic.push("insert(bean)");
  const parts = [...missing.map((g) => `'${g}'`), ...[...new Set(logic)].map((m) => `'logicContext.${m}'`)];
  if (parts.length > 0) {
    return {
      ok: false,
      reason: `it uses ${parts.join(", ")}, which Tessera's sandbox does not offer (rules.md "What rule code sees", javascript.md); port it by hand`,
    };
  }
  return { ok: true, usesLog: uses.identifiers.has("log") };
}

/** `logicContext.insert(x)` with one argument: LAC's bean insert, not Tessera's `insert(table, values)`. */
function usesBeanInsert(tree: Node): boolean {
  let found = false;
  visit(tree, (node) => {
    const n = node as Node & {
      callee?: Node & { object?: Node & { name?: string }; property?: Node & { name?: string } };
      arguments?: unknown[];
    };
    if (
      n.type === "CallExpression" &&
      n.callee?.type === "MemberExpression" &&
      n.callee.object?.name === "logicContext" &&
      n.callee.property?.name === "insert" &&
      n.arguments?.length === 1
    )
      found = true;
  });
  return found;
}

function usesOf(tree: Node): Uses {
  const identifiers = new Set<string>();
  const members = new Set<string>();
  const declared = declaredNames(tree);
  visit(tree, (node, parent, key) => {
    const n = node as Node & {
      name?: string;
      object?: Node & { name?: string };
      property?: Node & { name?: string };
      computed?: boolean;
    };
    if (n.type === "Identifier") {
      const p = parent as (Node & { computed?: boolean; shorthand?: boolean }) | undefined;
      const propertyName =
        (p?.type === "MemberExpression" && key === "property" && !p.computed) ||
        (p?.type === "Property" && key === "key" && !p.computed && !p.shorthand);
      if (!propertyName && n.name && !declared.has(n.name)) identifiers.add(n.name);
    } else if (
      n.type === "MemberExpression" &&
      !n.computed &&
      n.object?.type === "Identifier" &&
      n.property?.name
    ) {
      members.add(`${n.object.name}.${n.property.name}`);
    }
  });
  return { identifiers, members };
}

/** Names the code declares itself (variables, functions, parameters, caught errors): they are not the platform's. */
function declaredNames(tree: Node): Set<string> {
  const names = new Set<string>();
  const addPattern = (pattern: unknown) => {
    visit(pattern, (node, parent, key) => {
      const p = parent as (Node & { computed?: boolean }) | undefined;
      if (node.type === "Identifier" && !(p?.type === "Property" && key === "key" && !p.computed)) {
        names.add((node as Node & { name: string }).name);
      }
    });
  };
  visit(tree, (node) => {
    const n = node as Node & { id?: unknown; params?: unknown[]; param?: unknown };
    if (
      n.type === "VariableDeclarator" ||
      n.type === "FunctionDeclaration" ||
      n.type === "FunctionExpression" ||
      n.type === "ClassDeclaration"
    )
      addPattern(n.id);
    if (n.params) addPattern(n.params);
    if (n.type === "CatchClause") addPattern(n.param);
  });
  return names;
}

function visit(
  node: unknown,
  fn: (node: Node, parent: Node | undefined, key: string | undefined) => void,
  parent?: Node,
  key?: string,
): void {
  if (Array.isArray(node)) {
    for (const item of node) visit(item, fn, parent, key);
    return;
  }
  if (typeof node !== "object" || node === null || typeof (node as Node).type !== "string") return;
  fn(node as Node, parent, key);
  for (const [k, value] of Object.entries(node)) {
    if (k !== "type" && typeof value === "object") visit(value, fn, node as Node, k);
  }
}

/**
 * A guard in front of event code for LAC's `verbs` (`"INSERT,UPDATE,"`): the code
 * runs only for those verbs. Undefined when every verb is listed (or none).
 */
export function verbGuard(verbs: string | null | undefined): string | undefined {
  const list = (verbs ?? "")
    .split(",")
    .map((v) => v.trim().toUpperCase())
    .filter((v) => v !== "");
  const known = [...new Set(list.filter((v) => v === "INSERT" || v === "UPDATE" || v === "DELETE"))];
  if (known.length === 0 || known.length === 3) return undefined;
  return `if (${JSON.stringify(known)}.indexOf(logicContext.verb) === -1) return; // LAC verbs: ${known.join(", ")}\n`;
}

/**
 * A sum's, count's, min's or max's qualification over the child's attributes
 * (`null === ShippedDate`, or SQL-like `paid = false`) as Tessera's `where`
 * (`null === row.ShippedDate`): each free name that is a child column is read
 * from `row`; a lone `=` compares.
 */
export function qualification(
  source: string,
  column: ColumnLookup,
): { ok: true; where: string } | { ok: false; reason: string } {
  let tree: Node;
  try {
    tree = parseExpressionAt(source, 0, OPTIONS);
    if (source.slice(tree.end).trim() !== "") throw new Error(`unexpected text after position ${tree.end}`);
  } catch (err) {
    return {
      ok: false,
      reason: `the qualification '${source}' does not parse as a JavaScript expression (${err instanceof Error ? err.message : String(err)})`,
    };
  }
  const edits: { start: number; end: number; text: string }[] = [];
  const unknown = new Set<string>();
  visit(tree, (node, parent, key) => {
    const n = node as Node & { name?: string; operator?: string; left?: Node; right?: Node };
    if (n.type === "AssignmentExpression" && n.operator === "=" && n.left && n.right) {
      edits.push({ start: n.left.end, end: n.right.start, text: " == " });
    }
    if (n.type !== "Identifier" || !n.name) return;
    const p = parent as (Node & { computed?: boolean }) | undefined;
    if (p?.type === "MemberExpression" && key === "property" && !p.computed) return;
    if (
      n.name === "row" ||
      n.name === "undefined" ||
      n.name === "NaN" ||
      n.name === "Math" ||
      n.name === "Date"
    )
      return;
    const own = column(n.name);
    if (own) edits.push({ start: n.start, end: n.end, text: `row.${own}` });
    else unknown.add(n.name);
  });
  if (unknown.size > 0) {
    return {
      ok: false,
      reason: `the qualification '${source}' names ${[...unknown].map((u) => `'${u}'`).join(", ")}, not attributes of the child`,
    };
  }
  let where = source;
  for (const edit of edits.sort((a, b) => b.start - a.start || b.end - a.end)) {
    where = where.slice(0, edit.start) + edit.text + where.slice(edit.end);
  }
  return { ok: true, where: where.trim() };
}

/**
 * A validation's message with LAC's insertions made Tessera's: `{Balance|#,##0.00}`
 * becomes `{Balance}` (Tessera inserts the value as it is: the format is reported),
 * and an insertion naming no column of the table is left as its text.
 */
export function validationMessage(
  message: string,
  column: ColumnLookup,
): { text: string; formats: string[]; unknown: string[] } {
  const formats: string[] = [];
  const unknown: string[] = [];
  const text = message.replace(
    /\{([^{}|]+)(\|[^{}]*)?\}/g,
    (_whole, name: string, format: string | undefined) => {
      const own = column(name.trim());
      if (!own) {
        unknown.push(name);
        return name;
      }
      if (format) formats.push(`${name}${format}`);
      return `{${own}}`;
    },
  );
  return { text, formats, unknown };
}
