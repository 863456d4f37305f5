/**
 * Compiles a project's rules (docs/rules.md) into what the engine runs: per
 * table, its formulas in dependency order, the aggregates it owns and the ones
 * it feeds as a child, the parents its rules read, and which parent attribute
 * changes cascade to it. On the way it checks every rule: the tables, columns,
 * child lists and parent roles it names, its code (parsed once, with the
 * attributes it reads), column types, a column derived twice, and cycles in
 * the rule graph. References to lost parts of the definition are not
 * reported (their own problem was).
 */
import { LostParts } from "../definition/definition-salvage.ts";
import { type Problem, problemList, type Report } from "../definition/problems.ts";
import type { RuleDefinition, RuleType } from "../definition/project-definition.ts";
import { depTarget, readChain } from "./parent-paths.ts";
import { type CodeKind, type ParsedRuleCode, parseRuleCode, type RowRefs } from "./rule-code.ts";
import type { ColumnModel, Relationship, TableModel } from "./table-model.ts";

/**
 * The `{name}` placeholders of a validation's message: checked against the
 * table's columns here, replaced by the row's value when the validation fails.
 * A new global RegExp at each call, so that no lastIndex is shared.
 */
export function messagePlaceholders(): RegExp {
  return /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
}

/** The definition of a rule of type `T` (one member of the definition's union may cover several types). */
type RuleOf<T extends RuleType> = RuleDefinition & { type: T };
type AggregateDefinition = RuleOf<"sum" | "count" | "min" | "max">;

/** A JavaScript function of `(row, oldRow, logicContext)` in the project's rule program. */
export interface FunctionSource {
  /** Function body as given to `new Function`. */
  body: string;
  rule: number;
}

/** The fields a compiled rule keeps from its definition, by rule type. */
interface KeptFields {
  sum: "column" | "of";
  count: "column";
  min: "column" | "of";
  max: "column" | "of";
  formula: "column";
  parentCopy: "column" | "from";
  validation: "message";
  commitValidation: "message";
  earlyEvent: never;
  event: never;
  commitEvent: never;
  managedParent: never;
}

/** An aggregate: the child relationship it is over, and its `where`. */
interface AggregateParts {
  rel: Relationship;
  /** Slot of the `where` function in the program. */
  whereFn?: number;
  /** Child columns the `where` reads. */
  deps: Set<string>;
}

/** A rule that runs code of its own: the slot of its function (formula, validation, events) in the program. */
interface FunctionParts {
  fn: number;
}

/** What compiling adds to each type of rule's definition. */
interface CompiledParts {
  sum: AggregateParts;
  /** A count has no `of` (so that `rule.of` reads on any aggregate). */
  count: AggregateParts & { of?: undefined };
  min: AggregateParts;
  max: AggregateParts;
  /** `deps`: own columns and `role.attr` the formula reads. */
  formula: FunctionParts & { deps: Set<string> };
  /** `rel`: the first role's relationship (its foreign key decides when the value is copied); `parentPath`: the role path to the row copied from (`product`, `order.customer`). */
  parentCopy: { rel: Relationship; parentPath: string };
  validation: FunctionParts;
  commitValidation: FunctionParts;
  earlyEvent: FunctionParts;
  event: FunctionParts;
  commitEvent: FunctionParts;
  /** `rel`: the parent relationship whose missing parent the rule creates. */
  managedParent: { rel: Relationship };
}

/**
 * A rule of type `T` (or of each type of a union) as the engine runs it: its
 * place and name, what it keeps of its definition, and what compiling found.
 * Only a rule whose parts all compiled is one.
 */
export type Compiled<T extends RuleType> = T extends RuleType
  ? {
      /** Index in the definition's `rules`. */
      index: number;
      name: string;
    } & Pick<RuleOf<T>, Extract<keyof RuleOf<T>, "type" | "table" | KeptFields[T]>> &
      CompiledParts[T]
  : never;

/** Any compiled rule; `type` tells which. */
export type CompiledRule = Compiled<RuleType>;
export type AggregateRule = Compiled<AggregateDefinition["type"]>;
export type FormulaRule = Compiled<"formula">;
export type ParentCopyRule = Compiled<"parentCopy">;
export type ValidationRule = Compiled<"validation" | "commitValidation">;
export type EventRule = Compiled<"earlyEvent" | "event" | "commitEvent">;
export type ManagedParentRule = Compiled<"managedParent">;
/** The rules that derive a column (parentCopy columns stay writable). */
export type DerivingRule = AggregateRule | FormulaRule;

export interface Cascade {
  /** The relationship, this table being its parent. */
  rel: Relationship;
  /** Parent columns that children's formulas read through the role (`*` = all). */
  columns: Set<string>;
}

/** A cascade from a grand-parent (or further up) to the descendants whose formulas read it. */
export interface DeepCascade {
  /** The relationships from this table down to the formula's table (this table is the first one's parent). */
  rels: Relationship[];
  /** The role path from the formula's row up to this table (`order.customer`). */
  prefix: string;
  /** Columns of this table the descendants' formulas read through the path. */
  columns: Set<string>;
}

export interface TableLogic {
  name: string;
  table: TableModel;
  formulas: FormulaRule[];
  parentCopies: ParentCopyRule[];
  validations: ValidationRule[];
  commitValidations: ValidationRule[];
  earlyEvents: EventRule[];
  events: EventRule[];
  commitEvents: EventRule[];
  managedParents: Map<string, ManagedParentRule>;
  /** Aggregates stored in this table. */
  aggregates: AggregateRule[];
  /** Aggregates of parents computed over this table. */
  feeds: AggregateRule[];
  /** Columns derived by a rule (aggregates and formulas; parentCopy columns stay writable). */
  derived: Map<string, DerivingRule>;
  /** Role paths (`order`, `order.customer`) whose rows the per-row logic (early events, copies, formulas) reads. */
  passRoles: Set<string>;
  /** Role paths read by validations and events. */
  settleRoles: Set<string>;
  /** Role paths read by commit validations and commit events. */
  commitRoles: Set<string>;
  /** Relationships to children whose formulas read this table's columns. */
  cascades: Cascade[];
  /** Paths down to grand-children (and further) whose formulas read this table's columns. */
  deepCascades: DeepCascade[];
}

export interface LogicModel {
  rules: CompiledRule[];
  tables: Map<string, TableLogic>;
  functions: FunctionSource[];
  hasRules: boolean;
}

export function ruleName(rule: RuleDefinition, index: number): string {
  if (rule.name) return rule.name;
  if (rule.type === "managedParent") return `managedParent ${rule.table}.${rule.parent}`;
  if ("column" in rule) return `${rule.type} ${rule.table}.${rule.column}`;
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
    deepCascades: [],
  };
}

/** Compiles and checks the rules over the compiled tables; `problems` is empty when they can run. */
export function compileLogic(
  tables: Map<string, TableModel>,
  rules: readonly RuleDefinition[],
  lost: LostParts = new LostParts(undefined),
): { logic: LogicModel; problems: Problem[] } {
  const { problems, report } = problemList();
  const compiler = new RuleCompiler(tables, lost, report);
  rules.forEach((rule, index) => {
    compiler.add(rule, index);
  });
  return { logic: compiler.finish(), problems };
}

/** A rule's place in the definition and its name. */
type Named = Pick<CompiledRule, "index" | "name">;

/** An edge of the rule graph: the derivation of `to` reads `from` (both `table.column`). */
interface Edge {
  from: string;
  to: string;
  rule: CompiledRule;
}

class RuleCompiler {
  readonly #tables: Map<string, TableModel>;
  readonly #lost: LostParts;
  readonly #report: Report;
  readonly #logic = new Map<string, TableLogic>();
  readonly #rules: CompiledRule[] = [];
  readonly #functions: FunctionSource[] = [];
  readonly #edges: Edge[] = [];
  /** Columns a rule derives, by table, claimed whether or not the rest of the rule compiled. */
  readonly #claimed = new Map<TableLogic, Set<string>>();

  constructor(tables: Map<string, TableModel>, lost: LostParts, report: Report) {
    this.#tables = tables;
    this.#lost = lost;
    this.#report = report;
    for (const t of tables.values()) this.#logic.set(t.name, emptyTable(t));
  }

  add(def: RuleDefinition, index: number): void {
    const path = ["rules", index];
    const logic = this.#logic.get(def.table);
    if (!logic) {
      if (!this.#lost.has(["tables", def.table])) this.#report([...path, "table"], `no table '${def.table}'`);
      for (const [field, source, kind] of codeOf(def)) this.#parse(source, kind, [...path, field]);
      return;
    }
    const named = { index, name: ruleName(def, index) };
    switch (def.type) {
      case "sum":
      case "count":
      case "min":
      case "max":
        this.#aggregate(def, named, logic, path);
        return;
      case "formula":
        this.#formula(def, named, logic, path);
        return;
      case "parentCopy":
        this.#parentCopy(def, named, logic, path);
        return;
      case "validation":
      case "commitValidation": {
        const commit = def.type === "commitValidation";
        const roles = commit ? logic.commitRoles : logic.settleRoles;
        const fn = this.#ruleCode(def.expression, "expression", index, logic, roles, [...path, "expression"]);
        this.#checkMessage(def.message, logic.table, [...path, "message"]);
        if (fn === undefined) return;
        const rule: ValidationRule = { ...named, type: def.type, table: def.table, fn, message: def.message };
        this.#rules.push(rule);
        (commit ? logic.commitValidations : logic.validations).push(rule);
        return;
      }
      case "earlyEvent":
      case "event":
      case "commitEvent": {
        const [roles, list] =
          def.type === "earlyEvent"
            ? [logic.passRoles, logic.earlyEvents]
            : def.type === "event"
              ? [logic.settleRoles, logic.events]
              : [logic.commitRoles, logic.commitEvents];
        const fn = this.#ruleCode(def.code, "code", index, logic, roles, [...path, "code"]);
        if (fn === undefined) return;
        const rule: EventRule = { ...named, type: def.type, table: def.table, fn };
        this.#rules.push(rule);
        list.push(rule);
        return;
      }
      case "managedParent": {
        const rel = this.#parentRole(logic.table, def.parent, [...path, "parent"]);
        if (!rel) return;
        const rule: ManagedParentRule = { ...named, type: def.type, table: def.table, rel };
        this.#rules.push(rule);
        logic.managedParents.set(def.parent, rule);
        return;
      }
    }
  }

  #aggregate(def: AggregateDefinition, named: Named, logic: TableLogic, path: PropertyKey[]): void {
    const target = this.#column(logic.table, def.column, [...path, "column"]);
    const rel = logic.table.children.get(def.children);
    if (!rel && !this.#lost.mayHaveChildList(def.table, def.children))
      this.#report([...path, "children"], `'${def.children}' is not a child list of '${def.table}'`);
    const childLogic = rel && this.#logic.get(rel.childTable);
    const child = childLogic?.table;
    const of = def.type !== "count" && child ? this.#column(child, def.of, [...path, "of"]) : undefined;
    if (target && child && (def.type === "count" || of))
      checkAggregateTypes(def.type, target, of, path, this.#report);
    let whereFn: number | undefined;
    let deps = new Set<string>();
    if (def.where) {
      const code = this.#parse(def.where, "expression", [...path, "where"]);
      if (code) whereFn = this.#slot(code, named.index);
      if (code && child) deps = this.#whereReads(code.row, child, [...path, "where"]);
    }
    if (target) this.#claim(logic, def.column, path);
    if (!target || !rel || !childLogic) return;
    const parts = { ...named, table: def.table, column: def.column, rel, whereFn, deps };
    let rule: AggregateRule;
    if (def.type === "count") rule = { ...parts, type: def.type };
    else if (of) rule = { ...parts, type: def.type, of: def.of };
    else return;
    this.#rules.push(rule);
    logic.derived.set(def.column, rule);
    logic.aggregates.push(rule);
    childLogic.feeds.push(rule);
    const to = `${def.table}.${def.column}`;
    for (const c of [...(rule.of ? [rule.of] : []), ...rule.deps, ...rel.childColumns]) {
      this.#edges.push({ from: `${rel.childTable}.${c}`, to, rule });
    }
  }

  #formula(def: RuleOf<"formula">, named: Named, logic: TableLogic, path: PropertyKey[]): void {
    const target = this.#column(logic.table, def.column, [...path, "column"]);
    const code = this.#function(def.expression, "expression", named.index, [...path, "expression"]);
    let deps = new Set<string>();
    if (code) {
      deps = this.#reads(code.code, logic, [...path, "expression"], def.column);
      if (deps.has(def.column)) {
        this.#report(
          [...path, "expression"],
          `the formula for '${def.column}' reads its own value (use oldRow)`,
        );
        deps.delete(def.column);
      }
      this.#addRoles(logic.passRoles, code.code.row, logic.table);
    }
    if (!target) return;
    this.#claim(logic, def.column, path);
    if (!code) return;
    const rule: FormulaRule = {
      ...named,
      type: def.type,
      table: def.table,
      column: def.column,
      fn: code.fn,
      deps,
    };
    this.#rules.push(rule);
    logic.derived.set(def.column, rule);
    logic.formulas.push(rule);
    const to = `${def.table}.${def.column}`;
    for (const dep of rule.deps) {
      const target = depTarget(this.#tables, logic.table, dep);
      const from = target ? `${target.table.name}.${target.column}` : `${def.table}.${dep}`;
      this.#edges.push({ from, to, rule });
    }
  }

  #parentCopy(def: RuleOf<"parentCopy">, named: Named, logic: TableLogic, path: PropertyKey[]): void {
    const target = this.#column(logic.table, def.column, [...path, "column"]);
    // The first role's foreign key decides when the value is copied; the others lead to the row copied from.
    const rels: Relationship[] = [];
    let parent: TableModel | undefined = logic.table;
    for (const role of def.parent.split(".")) {
      const rel = this.#parentRole(parent, role, [...path, "parent"]);
      parent = rel && this.#tables.get(rel.parentTable);
      if (!rel || !parent) break;
      rels.push(rel);
    }
    if (parent) this.#column(parent, def.from, [...path, "from"]);
    if (target) this.#claim(logic, def.column, path, { writable: true });
    const rel = rels[0];
    if (!target || !rel || !parent) return;
    const rule: ParentCopyRule = {
      ...named,
      type: def.type,
      table: def.table,
      column: def.column,
      rel,
      from: def.from,
      parentPath: def.parent,
    };
    this.#rules.push(rule);
    for (const r of readChain(this.#tables, logic.table, def.parent.split(".")).roles) logic.passRoles.add(r);
    logic.parentCopies.push(rule);
    for (const c of rel.childColumns) {
      this.#edges.push({ from: `${def.table}.${c}`, to: `${def.table}.${def.column}`, rule });
    }
  }

  /** A column of `table`, or undefined (reported unless it was lost). */
  #column(table: TableModel, column: string, path: PropertyKey[]): ColumnModel | undefined {
    const found = table.columns.get(column);
    if (!found && !this.#lost.has(["tables", table.name, "columns", column]))
      this.#report(path, `'${column}' is not a column of '${table.name}'`);
    return found;
  }

  /** A parent relationship of `table`, or undefined (reported unless it was lost). */
  #parentRole(table: TableModel, role: string, path: PropertyKey[]): Relationship | undefined {
    const rel = table.parents.get(role);
    if (!rel && !this.#lost.has(["tables", table.name, "parents", role]))
      this.#report(path, `'${role}' is not a parent role of '${table.name}'`);
    return rel;
  }

  /**
   * Claims `column` for a rule (whether or not the rest of it compiles): one rule derives a
   * column, and never a key column; a parentCopy's column stays `writable`.
   */
  #claim(logic: TableLogic, column: string, path: PropertyKey[], { writable = false } = {}): void {
    const claimed = this.#claimed.get(logic) ?? new Set<string>();
    if (claimed.has(column) || logic.parentCopies.some((r) => r.column === column))
      this.#report([...path, "column"], `'${logic.name}.${column}' is already derived by another rule`);
    if (logic.table.key.includes(column))
      this.#report([...path, "column"], `key column '${column}' cannot be derived`);
    if (!writable) this.#claimed.set(logic, claimed.add(column));
  }

  /** Parses rule code; reports a syntax error. */
  #parse(source: string, kind: CodeKind, path: PropertyKey[]): ParsedRuleCode | undefined {
    const parsed = parseRuleCode(source, kind);
    if (parsed.ok) return parsed.code;
    this.#report(path, `does not parse: ${parsed.error}`);
    return undefined;
  }

  /** Adds parsed code to the program's functions; returns its slot. */
  #slot(code: ParsedRuleCode, rule: number): number {
    this.#functions.push({ body: code.body, rule });
    return this.#functions.length - 1;
  }

  /** Parses the rule's own code (formula, validation, event) into a function of the program: the code and its slot. */
  #function(
    source: string,
    kind: CodeKind,
    rule: number,
    path: PropertyKey[],
  ): { code: ParsedRuleCode; fn: number } | undefined {
    const code = this.#parse(source, kind, path);
    return code && { code, fn: this.#slot(code, rule) };
  }

  /** A validation's or an event's code: its function's slot, a check of what it reads, and the parents it needs. */
  #ruleCode(
    source: string,
    kind: CodeKind,
    rule: number,
    logic: TableLogic,
    roles: Set<string>,
    path: PropertyKey[],
  ): number | undefined {
    const compiled = this.#function(source, kind, rule, path);
    if (!compiled) return undefined;
    this.#reads(compiled.code, logic, path);
    this.#addRoles(roles, compiled.code.row, logic.table);
    return compiled.fn;
  }

  /** Adds the role paths whose rows the code reads (every direct parent when its use of `row` cannot be followed). */
  #addRoles(roles: Set<string>, refs: RowRefs, table: TableModel): void {
    if (refs.dynamic) for (const role of table.parents.keys()) roles.add(role);
    for (const chain of refs.chains)
      for (const r of readChain(this.#tables, table, chain).roles) roles.add(r);
  }

  /** The names a rule's code reads, as own columns and `role.attr`; reports names that are neither. */
  #reads(code: ParsedRuleCode, logic: TableLogic, path: PropertyKey[], self?: string): Set<string> {
    const { row, oldRow } = code;
    const table = logic.table;
    const deps = new Set<string>();
    if (row.dynamic) {
      for (const c of table.columns.keys()) if (c !== self) deps.add(c);
      for (const [role, rel] of table.parents) {
        for (const c of this.#tables.get(rel.parentTable)?.columns.keys() ?? []) deps.add(`${role}.${c}`);
      }
    }
    const reported = new Set<string>();
    for (const chain of row.chains) {
      const reads = readChain(this.#tables, table, chain);
      for (const d of reads.deps) deps.add(d);
      const unknown = reads.unknown;
      if (!unknown || this.#lostAttribute(unknown.table, unknown.name)) continue;
      const at = unknown.path.join(".");
      if (reported.has(at)) continue;
      reported.add(at);
      this.#report(
        path,
        unknown.path.length === 1
          ? `'${unknown.name}' is not an attribute or parent role of '${table.name}'`
          : `'${unknown.name}' is not an attribute of '${unknown.table.name}' (read as '${at}')`,
      );
    }
    for (const name of oldRow.names) {
      if (table.columns.has(name) || this.#lost.has(["tables", table.name, "columns", name])) continue;
      this.#report(
        path,
        table.parents.has(name)
          ? `'oldRow.${name}': oldRow holds the row's own attributes only, not its parents`
          : `'${name}' is not an attribute of '${table.name}' (read as 'oldRow.${name}')`,
      );
    }
    return deps;
  }

  /** The child columns an aggregate's `where` reads; it may read only the child's own attributes. */
  #whereReads(row: RowRefs, child: TableModel, path: PropertyKey[]): Set<string> {
    const deps = new Set<string>();
    if (row.dynamic) for (const c of child.columns.keys()) deps.add(c);
    for (const name of row.names) {
      if (child.columns.has(name)) deps.add(name);
      else if (child.parents.has(name))
        this.#report(path, `a where clause can only read the child's own attributes, not '${name}'`);
      else if (!this.#lostAttribute(child, name))
        this.#report(path, `'${name}' is not an attribute of '${child.name}'`);
    }
    return deps;
  }

  /** Was `name` of `table` a column or a parent role that got lost? */
  #lostAttribute(table: TableModel, name: string): boolean {
    return (
      this.#lost.has(["tables", table.name, "columns", name]) ||
      this.#lost.has(["tables", table.name, "parents", name])
    );
  }

  #checkMessage(message: string | undefined, table: TableModel, path: PropertyKey[]): void {
    for (const m of (message ?? "").matchAll(messagePlaceholders())) {
      const name = m[1] ?? "";
      if (!table.columns.has(name) && !this.#lost.has(["tables", table.name, "columns", name]))
        this.#report(path, `'{${name}}' is not an attribute of '${table.name}'`);
    }
  }

  /** Registers, on the table a formula's dependency `dep` reads from, that its changes reach the formula's rows. */
  #cascade(logic: TableLogic, dep: string): void {
    const target = depTarget(this.#tables, logic.table, dep);
    const source = target && this.#logic.get(target.table.name);
    if (!target || !source) return;
    // The relationship nearest to this table (whose parent it is).
    const [nearest] = target.rels;
    if (!nearest) return;
    if (target.rels.length === 1) {
      let cascade = source.cascades.find((c) => c.rel === nearest);
      if (!cascade) {
        cascade = { rel: nearest, columns: new Set() };
        source.cascades.push(cascade);
      }
      cascade.columns.add(target.column);
      return;
    }
    const prefix = dep.slice(0, dep.lastIndexOf("."));
    let deep = source.deepCascades.find((c) => c.prefix === prefix && c.rels.at(-1) === nearest);
    if (!deep) {
      deep = { rels: [...target.rels].reverse(), prefix, columns: new Set() };
      source.deepCascades.push(deep);
    }
    deep.columns.add(target.column);
  }

  finish(): LogicModel {
    for (const logic of this.#logic.values()) {
      logic.formulas = orderFormulas(logic);
      for (const f of logic.formulas) {
        for (const dep of f.deps) this.#cascade(logic, dep);
      }
    }
    findCycles(this.#edges, this.#report);
    return {
      rules: this.#rules,
      tables: this.#logic,
      functions: this.#functions,
      hasRules: this.#rules.length > 0,
    };
  }
}

/** The rule's JavaScript: field, text, and how it is read. */
function codeOf(def: RuleDefinition): [string, string, CodeKind][] {
  switch (def.type) {
    case "sum":
    case "count":
    case "min":
    case "max":
      return def.where ? [["where", def.where, "expression"]] : [];
    case "formula":
    case "validation":
    case "commitValidation":
      return [["expression", def.expression, "expression"]];
    case "earlyEvent":
    case "event":
    case "commitEvent":
      return [["code", def.code, "code"]];
    default:
      return [];
  }
}

const NUMERIC = new Set(["number", "integer"]);

function checkAggregateTypes(
  type: AggregateDefinition["type"],
  target: ColumnModel,
  of: ColumnModel | undefined,
  path: PropertyKey[],
  report: Report,
): void {
  if (type === "count") {
    if (!NUMERIC.has(target.type)) report([...path, "column"], "a count needs a number or integer column");
    return;
  }
  if (!of) return;
  if (type === "sum") {
    if (!NUMERIC.has(of.type)) report([...path, "of"], "a sum needs a number or integer child column");
    else if (!(target.type === "number" || (target.type === "integer" && of.type === "integer"))) {
      report([...path, "column"], `the sum of a ${of.type} column needs a number column here`);
    }
    return;
  }
  if (of.type === "json" || of.type === "boolean") {
    report([...path, "of"], `${type} cannot be taken over a ${of.type} column`);
  } else if (!(of.type === target.type || (NUMERIC.has(of.type) && target.type === "number"))) {
    report([...path, "column"], `the ${type} of a ${of.type} column needs a ${of.type} column here`);
  }
}

/** Formulas of one table in dependency order (definition order among independent ones). */
function orderFormulas(logic: TableLogic): FormulaRule[] {
  const ordered: FormulaRule[] = [];
  const state = new Map<FormulaRule, "visiting" | "done">();
  const visit = (f: FormulaRule) => {
    if (state.has(f)) return; // a cycle is reported by findCycles
    state.set(f, "visiting");
    for (const dep of f.deps) {
      const g = logic.derived.get(dep);
      if (g?.type === "formula") visit(g);
    }
    state.set(f, "done");
    ordered.push(f);
  };
  for (const f of logic.formulas) visit(f);
  return ordered;
}

/**
 * The rule graph: a node per derived column; an edge from every column a
 * derivation reads. A cycle would make a request chain forever (or depend on
 * the order rows are processed), so the definition is rejected.
 */
function findCycles(edgeList: Edge[], report: Report): void {
  const edges = new Map<string, Edge[]>();
  for (const e of edgeList) {
    const list = edges.get(e.from);
    if (list) list.push(e);
    else edges.set(e.from, [e]);
  }
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const reported = new Set<number>();
  const visit = (node: string): void => {
    state.set(node, "visiting");
    for (const e of edges.get(node) ?? []) {
      if (state.get(e.to) === "visiting") {
        const cycle = [...stack.slice(stack.indexOf(e.to)), node, e.to];
        const path = cycle.filter((n, i) => i === 0 || n !== cycle[i - 1]);
        if (!reported.has(e.rule.index)) {
          reported.add(e.rule.index);
          report(["rules", e.rule.index], `rules form a cycle: ${path.join(" → ")}`);
        }
        continue;
      }
      if (!state.has(e.to)) {
        stack.push(e.to);
        visit(e.to);
        stack.pop();
      }
    }
    state.set(node, "done");
  };
  for (const node of [...edges.keys()].sort()) {
    if (!state.has(node)) {
      stack.push(node);
      visit(node);
      stack.pop();
    }
  }
}
