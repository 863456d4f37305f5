/**
 * Compiles a project's rules (DESIGN.md §5.1) into what the engine runs: per
 * table, its formulas in dependency order, the aggregates it owns and the ones
 * it feeds as a child, the parents its rules read, and which parent attribute
 * changes cascade to it. Also checks what the basic model check does not:
 * syntax of every expression, names read from `row`, column types, a column
 * derived twice, and cycles in the rule graph.
 */
import type { Problem, RuleDefinition } from "../domain/project-definition.ts";
import { jsonPath } from "../domain/project-definition.ts";
import type { ProjectModel, Relationship, TableModel } from "../domain/project-model.ts";
import { type RowRefs, rowRefs } from "./expression-refs.ts";

export type RuleType = RuleDefinition["type"];
export const AGGREGATES = new Set<RuleType>(["sum", "count", "min", "max"]);
const COLUMN_RULES = new Set<RuleType>(["sum", "count", "min", "max", "formula", "parentCopy"]);

/** A JavaScript function of `(row, oldRow, logicContext)` in the project's rule program. */
export interface FunctionSource {
  /** Function body as given to `new Function`. */
  body: string;
  rule: number;
}

export interface CompiledRule {
  /** Index in the definition's `rules`. */
  index: number;
  name: string;
  type: RuleType;
  table: string;
  column?: string;
  /** sum/count/min/max: the child relationship; parentCopy/managedParent: the parent relationship. */
  rel?: Relationship;
  of?: string;
  /** Slot of the rule's function (formula, validation, events) in the program. */
  fn?: number;
  /** Slot of the aggregate's `where` function. */
  whereFn?: number;
  /** Formula: own columns and `role.attr` it reads. Aggregate: child columns its where reads. */
  deps: Set<string>;
  /** parentCopy: the parent column copied. */
  from?: string;
  message?: string;
}

export interface Cascade {
  /** The relationship, this table being its parent. */
  rel: Relationship;
  /** Parent columns that children's formulas read through the role (`*` = all). */
  columns: Set<string>;
}

export interface TableLogic {
  name: string;
  table: TableModel;
  formulas: CompiledRule[];
  parentCopies: CompiledRule[];
  validations: CompiledRule[];
  commitValidations: CompiledRule[];
  earlyEvents: CompiledRule[];
  events: CompiledRule[];
  commitEvents: CompiledRule[];
  managedParents: Map<string, CompiledRule>;
  /** Aggregates stored in this table. */
  aggregates: CompiledRule[];
  /** Aggregates of parents computed over this table. */
  feeds: CompiledRule[];
  /** Columns derived by a rule (aggregates and formulas; parentCopy columns stay writable). */
  derived: Map<string, CompiledRule>;
  /** Parent roles whose rows the per-row logic (early events, copies, formulas) reads. */
  passRoles: Set<string>;
  /** Parent roles read by validations and events. */
  settleRoles: Set<string>;
  /** Parent roles read by commit validations and commit events. */
  commitRoles: Set<string>;
  /** Relationships to children whose formulas read this table's columns. */
  cascades: Cascade[];
}

export interface LogicModel {
  rules: CompiledRule[];
  tables: Map<string, TableLogic>;
  functions: FunctionSource[];
  hasRules: boolean;
}

const PARAMS = ["row", "oldRow", "logicContext"] as const;

/** The body of a rule function: an expression is returned; anything else is taken as a function body. */
export function functionBody(
  code: string,
  kind: "expression" | "code",
): { body: string } | { error: string } {
  if (kind === "expression") {
    const asExpression = `return (${code}\n);`;
    const e = syntaxError(asExpression);
    if (!e) return { body: asExpression };
    const b = syntaxError(code);
    if (!b) return { body: code };
    return { error: /\breturn\b/.test(code) ? b : e };
  }
  const b = syntaxError(code);
  return b ? { error: b } : { body: code };
}

/** Parses (never runs) a function body; returns the syntax error's message, if any. */
function syntaxError(body: string): string | undefined {
  try {
    // Parsing only: the function is created and dropped, never called.
    new Function(...PARAMS, body);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export function ruleName(rule: RuleDefinition, index: number): string {
  if (rule.name) return rule.name;
  if (COLUMN_RULES.has(rule.type)) return `${rule.type} ${rule.table}.${rule.column}`;
  if (rule.type === "managedParent") return `managedParent ${rule.table}.${rule.parent}`;
  return `${rule.type} ${rule.table} #${index}`;
}

function emptyTable(table: TableModel): TableLogic {
  return {
    name: table.name,
    table,
    formulas: [],
    parentCopies: [],
    validations: [],
    commitValidations: [],
    earlyEvents: [],
    events: [],
    commitEvents: [],
    managedParents: new Map(),
    aggregates: [],
    feeds: [],
    derived: new Map(),
    passRoles: new Set(),
    settleRoles: new Set(),
    commitRoles: new Set(),
    cascades: [],
  };
}

type Report = (path: PropertyKey[], message: string) => void;

/** Compiles the rules of a model that passed the basic checks; `problems` is empty when it can run. */
export function compileLogic(model: ProjectModel): { logic: LogicModel; problems: Problem[] } {
  const problems: Problem[] = [];
  const report: Report = (path, message) => problems.push({ path: jsonPath(path), message });
  const tables = new Map<string, TableLogic>();
  for (const t of model.tables.values()) tables.set(t.name, emptyTable(t));
  const functions: FunctionSource[] = [];
  const rules: CompiledRule[] = [];

  const addFunction = (
    code: string,
    kind: "expression" | "code",
    index: number,
    path: PropertyKey[],
  ): number | undefined => {
    const r = functionBody(code, kind);
    if ("error" in r) {
      report(path, `does not parse: ${r.error}`);
      return undefined;
    }
    functions.push({ body: r.body, rule: index });
    return functions.length - 1;
  };

  model.rules.forEach((def, index) => {
    const path = ["rules", index];
    const logic = tables.get(def.table);
    if (!logic) return;
    const table = logic.table;
    const rule: CompiledRule = {
      index,
      name: ruleName(def, index),
      type: def.type,
      table: def.table,
      column: def.column,
      deps: new Set(),
      message: def.message,
    };
    rules.push(rule);
    switch (def.type) {
      case "sum":
      case "count":
      case "min":
      case "max": {
        const rel = table.children.get(def.children!)!;
        const child = model.tables.get(rel.childTable)!;
        rule.rel = rel;
        rule.of = def.type === "count" ? undefined : def.of;
        checkAggregateTypes(def, table, child, path, report);
        if (def.where) {
          rule.whereFn = addFunction(def.where, "expression", index, [...path, "where"]);
          const refs = rowRefs(def.where);
          if (refs.dynamic) for (const c of child.columns.keys()) rule.deps.add(c);
          for (const name of refs.names) {
            if (child.columns.has(name)) rule.deps.add(name);
            else if (child.parents.has(name))
              report(
                [...path, "where"],
                `a where clause can only read the child's own attributes, not '${name}'`,
              );
            else report([...path, "where"], `'${name}' is not an attribute of '${child.name}'`);
          }
        }
        logic.aggregates.push(rule);
        tables.get(child.name)!.feeds.push(rule);
        break;
      }
      case "formula": {
        rule.fn = addFunction(def.expression!, "expression", index, [...path, "expression"]);
        const refs = rowRefs(def.expression!);
        rule.deps = readSet(refs, table, model, [...path, "expression"], report, def.column);
        if (rule.deps.has(def.column!)) {
          report([...path, "expression"], `the formula for '${def.column}' reads its own value (use oldRow)`);
          rule.deps.delete(def.column!);
        }
        addRoles(logic.passRoles, refs, table);
        logic.formulas.push(rule);
        break;
      }
      case "parentCopy": {
        rule.rel = table.parents.get(def.parent!)!;
        rule.from = def.from;
        logic.passRoles.add(def.parent!);
        logic.parentCopies.push(rule);
        break;
      }
      case "validation":
      case "commitValidation": {
        rule.fn = addFunction(def.expression!, "expression", index, [...path, "expression"]);
        const refs = rowRefs(def.expression!);
        readSet(refs, table, model, [...path, "expression"], report);
        addRoles(def.type === "validation" ? logic.settleRoles : logic.commitRoles, refs, table);
        checkMessage(def.message, table, [...path, "message"], report);
        (def.type === "validation" ? logic.validations : logic.commitValidations).push(rule);
        break;
      }
      case "earlyEvent":
      case "event":
      case "commitEvent": {
        rule.fn = addFunction(def.code!, "code", index, [...path, "code"]);
        const refs = rowRefs(def.code!);
        readSet(refs, table, model, [...path, "code"], report);
        const roles =
          def.type === "earlyEvent"
            ? logic.passRoles
            : def.type === "event"
              ? logic.settleRoles
              : logic.commitRoles;
        addRoles(roles, refs, table);
        (def.type === "earlyEvent"
          ? logic.earlyEvents
          : def.type === "event"
            ? logic.events
            : logic.commitEvents
        ).push(rule);
        break;
      }
      case "managedParent": {
        rule.rel = table.parents.get(def.parent!)!;
        logic.managedParents.set(def.parent!, rule);
        break;
      }
    }
    if (def.column && (AGGREGATES.has(def.type) || def.type === "formula" || def.type === "parentCopy")) {
      const previous = [...tables.get(def.table)!.derived.values()].find((r) => r.column === def.column);
      const copy = logic.parentCopies.find((r) => r !== rule && r.column === def.column);
      if (previous || copy)
        report([...path, "column"], `'${def.table}.${def.column}' is already derived by another rule`);
      if (table.key.includes(def.column))
        report([...path, "column"], `key column '${def.column}' cannot be derived`);
      if (def.type !== "parentCopy") logic.derived.set(def.column, rule);
    }
  });

  for (const logic of tables.values()) {
    logic.formulas = orderFormulas(logic, report);
    for (const f of logic.formulas) {
      for (const dep of f.deps) {
        const dot = dep.indexOf(".");
        if (dot < 0) continue;
        const role = dep.slice(0, dot);
        const rel = logic.table.parents.get(role)!;
        const parent = tables.get(rel.parentTable)!;
        let cascade = parent.cascades.find((c) => c.rel === rel);
        if (!cascade) {
          cascade = { rel, columns: new Set() };
          parent.cascades.push(cascade);
        }
        cascade.columns.add(dep.slice(dot + 1));
      }
    }
  }
  findCycles(rules, tables, report);
  return { logic: { rules, tables, functions, hasRules: rules.length > 0 }, problems };
}

/** The names a rule reads, as own columns and `role.attr`; reports names that are neither. */
function readSet(
  refs: RowRefs,
  table: TableModel,
  model: ProjectModel,
  path: PropertyKey[],
  report: Report,
  self?: string,
): Set<string> {
  const deps = new Set<string>();
  if (refs.dynamic) {
    for (const c of table.columns.keys()) if (c !== self) deps.add(c);
    for (const [role, rel] of table.parents) {
      for (const c of model.tables.get(rel.parentTable)!.columns.keys()) deps.add(`${role}.${c}`);
    }
  }
  for (const name of refs.names) {
    if (table.columns.has(name)) {
      deps.add(name);
      continue;
    }
    const rel = table.parents.get(name);
    if (!rel) {
      report(path, `'${name}' is not an attribute or parent role of '${table.name}'`);
      continue;
    }
    const parent = model.tables.get(rel.parentTable)!;
    const attrs = refs.whole.has(name) ? [...parent.columns.keys()] : [...(refs.nested.get(name) ?? [])];
    for (const attr of attrs) {
      if (!parent.columns.has(attr)) {
        report(path, `'${attr}' is not an attribute of '${parent.name}' (read as '${name}.${attr}')`);
        continue;
      }
      deps.add(`${name}.${attr}`);
    }
    // The foreign key decides which parent is read.
    for (const c of rel.childColumns) deps.add(c);
  }
  return deps;
}

function addRoles(roles: Set<string>, refs: RowRefs, table: TableModel): void {
  if (refs.dynamic) for (const role of table.parents.keys()) roles.add(role);
  for (const name of refs.names) if (table.parents.has(name)) roles.add(name);
}

function checkMessage(message: string | undefined, table: TableModel, path: PropertyKey[], report: Report) {
  for (const m of (message ?? "").matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
    if (!table.columns.has(m[1]!)) report(path, `'{${m[1]}}' is not an attribute of '${table.name}'`);
  }
}

const NUMERIC = new Set(["number", "integer"]);

function checkAggregateTypes(
  def: RuleDefinition,
  table: TableModel,
  child: TableModel,
  path: PropertyKey[],
  report: Report,
): void {
  const target = table.columns.get(def.column!)!;
  const of = def.of ? child.columns.get(def.of) : undefined;
  if (def.type === "count") {
    if (!NUMERIC.has(target.type)) report([...path, "column"], "a count needs a number or integer column");
    return;
  }
  if (!of) return;
  if (def.type === "sum") {
    if (!NUMERIC.has(of.type)) report([...path, "of"], "a sum needs a number or integer child column");
    else if (!(target.type === "number" || (target.type === "integer" && of.type === "integer"))) {
      report([...path, "column"], `the sum of a ${of.type} column needs a number column here`);
    }
    return;
  }
  if (of.type === "json" || of.type === "boolean") {
    report([...path, "of"], `${def.type} cannot be taken over a ${of.type} column`);
  } else if (!(of.type === target.type || (NUMERIC.has(of.type) && target.type === "number"))) {
    report([...path, "column"], `the ${def.type} of a ${of.type} column needs a ${of.type} column here`);
  }
}

/** Formulas of one table in dependency order (definition order among independent ones). */
function orderFormulas(logic: TableLogic, report: Report): CompiledRule[] {
  const byColumn = new Map(logic.formulas.map((f) => [f.column!, f]));
  const ordered: CompiledRule[] = [];
  const state = new Map<CompiledRule, "visiting" | "done">();
  const visit = (f: CompiledRule) => {
    if (state.get(f) === "done") return;
    if (state.get(f) === "visiting") return; // reported by findCycles
    state.set(f, "visiting");
    for (const dep of f.deps) {
      const g = byColumn.get(dep);
      if (g) visit(g);
    }
    state.set(f, "done");
    ordered.push(f);
  };
  for (const f of logic.formulas) visit(f);
  void report;
  return ordered;
}

/**
 * The rule graph: a node per derived column; an edge from every column a
 * derivation reads. A cycle would make a request chain forever (or depend on
 * the order rows are processed), so the definition is rejected.
 */
function findCycles(rules: CompiledRule[], tables: Map<string, TableLogic>, report: Report): void {
  const edges = new Map<string, { to: string; rule: CompiledRule }[]>();
  const add = (from: string, to: string, rule: CompiledRule) => {
    let list = edges.get(from);
    if (!list) {
      list = [];
      edges.set(from, list);
    }
    list.push({ to, rule });
  };
  for (const rule of rules) {
    const target = `${rule.table}.${rule.column}`;
    if (rule.type === "formula") {
      const table = tables.get(rule.table)!.table;
      for (const dep of rule.deps) {
        const dot = dep.indexOf(".");
        if (dot < 0) add(`${rule.table}.${dep}`, target, rule);
        else {
          const rel = table.parents.get(dep.slice(0, dot))!;
          add(`${rel.parentTable}.${dep.slice(dot + 1)}`, target, rule);
        }
      }
    } else if (AGGREGATES.has(rule.type)) {
      const child = rule.rel!.childTable;
      if (rule.of) add(`${child}.${rule.of}`, target, rule);
      for (const c of rule.deps) add(`${child}.${c}`, target, rule);
      for (const c of rule.rel!.childColumns) add(`${child}.${c}`, target, rule);
    } else if (rule.type === "parentCopy") {
      for (const c of rule.rel!.childColumns) add(`${rule.table}.${c}`, target, rule);
    }
  }
  const state = new Map<string, "visiting" | "done">();
  const stack: { node: string; rule?: CompiledRule }[] = [];
  const reported = new Set<number>();
  const visit = (node: string): void => {
    state.set(node, "visiting");
    for (const e of edges.get(node) ?? []) {
      if (state.get(e.to) === "visiting") {
        const start = stack.findIndex((s) => s.node === e.to);
        const cycle = [...stack.slice(start).map((s) => s.node), node, e.to];
        const path = cycle.filter((n, i) => i === 0 || n !== cycle[i - 1]);
        if (!reported.has(e.rule.index)) {
          reported.add(e.rule.index);
          report(["rules", e.rule.index], `rules form a cycle: ${path.join(" → ")}`);
        }
        continue;
      }
      if (!state.has(e.to)) {
        stack.push({ node: e.to, rule: e.rule });
        visit(e.to);
        stack.pop();
      }
    }
    state.set(node, "done");
  };
  for (const node of [...edges.keys()].sort()) {
    if (!state.has(node)) {
      stack.push({ node });
      visit(node);
      stack.pop();
    }
  }
}
