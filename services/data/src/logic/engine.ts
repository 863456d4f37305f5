/**
 * The reactive logic engine (lac-compat.md "Reactive logic"). It runs on a
 * request's WritePlan after the client's objects are planned and before
 * anything is written:
 *
 * 1. Propagation, in waves until nothing changes: for each changed row, its
 *    early events, parent copies (at insert / re-parent) and the formulas whose
 *    inputs changed, in dependency order; then the row's contribution to each
 *    parent aggregate is compared with what the parent already reflects, and
 *    the parent is adjusted by the difference (sum/count: a one-row update;
 *    min/max: a rescan of that parent's children only when the extreme
 *    leaves). A changed parent attribute that children's formulas read
 *    cascades to those children. Every wave is one sandbox call.
 * 2. Settling: validations and events of every changed row, on its final
 *    state. Rows that events insert go back to 1.
 * 3. Commit validations and commit events over the final state.
 *
 * Parent rows are read once per request (WritePlan caches them); aggregates
 * never re-read all children except for a min/max rescan.
 */
import { type ApiError, errors } from "../../../../shared/errors.ts";
import type { Principal } from "../domain/authorization.ts";
import type { Problem } from "../domain/project-definition.ts";
import type {
  ProjectModel,
  Relationship,
  ResourceModel,
  TableModel,
  VersionModel,
} from "../domain/project-model.ts";
import { coerceValue, outputValue, rowId } from "../domain/values.ts";
import { newChecksum, parentIdOf, type RowChange, type Verb, type WritePlan } from "../domain/write-plan.ts";
import type { RowDocument, RowId } from "../store/tenant-store.ts";
import {
  type PassTask,
  programSource,
  type RuleRow,
  type SettleTask,
  type Task,
  type TaskResult,
} from "./program.ts";
import { type CompiledRule, compileLogic, type LogicModel, type TableLogic } from "./rule-model.ts";
import { type RuleProgram, type RuleRuntime, ruleFailure } from "./runtime.ts";

export interface LogicLimits {
  /** Propagation waves per round (each is one sandbox call). */
  maxWaves: number;
  /** Row passes per request (a row processed again counts again). */
  maxRowPasses: number;
  /** Rounds of events inserting rows that insert rows… */
  maxSettleRounds: number;
}

export const DEFAULT_LIMITS: LogicLimits = { maxWaves: 500, maxRowPasses: 100_000, maxSettleRounds: 50 };

export interface LogicRequest {
  principal: Principal;
  /** The resource the client wrote to. */
  resource: ResourceModel;
  version: VersionModel;
}

/** Statistics of one request's logic (for tests and logs). */
export interface LogicStats {
  sandboxCalls: number;
  rowPasses: number;
  waves: number;
}

interface Compiled {
  logic: LogicModel;
  problems: Problem[];
  program: RuleProgram;
  byIndex: Map<number, CompiledRule>;
}

export class LogicEngine {
  readonly runtime: RuleRuntime;
  readonly limits: LogicLimits;
  readonly #compiled = new WeakMap<ProjectModel, Compiled>();

  constructor(runtime: RuleRuntime, limits: Partial<LogicLimits> = {}) {
    this.runtime = runtime;
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /** Problems of a project's rules (run when a definition is applied). */
  check(model: ProjectModel): Problem[] {
    return this.compiled(model).problems;
  }

  compiled(model: ProjectModel): Compiled {
    let c = this.#compiled.get(model);
    if (!c) {
      const { logic, problems } = compileLogic(model);
      c = {
        logic,
        problems,
        program: {
          key: `rules:${model.account}/${model.name}`,
          version: `${model.uid}:${model.revision}`,
          source: programSource(logic),
        },
        byIndex: new Map(logic.rules.map((r) => [r.index, r])),
      };
      this.#compiled.set(model, c);
    }
    return c;
  }

  /** Runs the project's rules over the plan; throws (and the request fails) when a rule rejects it. */
  async apply(plan: WritePlan, request: LogicRequest): Promise<LogicStats> {
    const compiled = this.compiled(plan.project);
    const stats: LogicStats = { sandboxCalls: 0, rowPasses: 0, waves: 0 };
    if (!compiled.logic.hasRules) return stats;
    if (compiled.problems.length > 0) {
      throw ruleFailure(
        `The project's rules cannot run: ${compiled.problems[0]!.path}: ${compiled.problems[0]!.message}`,
      );
    }
    await new RequestLogic(this, compiled, plan, request, stats).run();
    return stats;
  }
}

/** What a child row contributes to one aggregate of its parent, as the parent currently reflects it. */
interface Contribution {
  parent: RowId | null;
  /** The aggregate's `where`; undefined = not evaluated yet. */
  qualified: boolean | undefined;
  value: unknown;
  /** The row state this was taken from. */
  src: RowDocument;
}

interface Rec {
  key: string;
  logic: TableLogic;
  id: RowId;
  resource: ResourceModel;
  /** The row as stored before this request (null: inserted by it). */
  before: RowDocument | null;
  /** The row when its logic last ran (undefined: not yet; null: deleted). */
  seen: RowDocument | null | undefined;
  /** Dirty markers that a row diff cannot show (`role.attr` of a changed parent). */
  extra: Set<string>;
  initialVerb: Verb;
  queued: boolean;
  /** Applied contributions by aggregate rule index (absent: as stored before the request). */
  contrib: Map<number, Contribution | null>;
  /** `_ck` of the state last validated (null: settled as deleted). */
  settled: string | null | undefined;
  /** The state last validated: `oldRow` of the row's next events. */
  settledRow: RowDocument | null;
}

interface Prep {
  rec: Rec;
  current: RowDocument | null;
  base: RowDocument | null;
  task?: PassTask;
}

function recKey(table: string, id: RowId): string {
  return `${table}\u0000${JSON.stringify(id)}`;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (a === null || b === null) return a === b;
  if (typeof a !== "object" || typeof b !== "object") return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Columns whose values differ (all columns of the one that exists when the other is null). */
function diffColumns(table: TableModel, a: RowDocument | null, b: RowDocument | null): Set<string> {
  const out = new Set<string>();
  if (!a && !b) return out;
  for (const c of table.columnOrder) {
    if (!a || !b || !sameValue(a[c], b[c])) out.add(c);
  }
  return out;
}

/** Sums in doubles drift (0.1 + 0.2); 15 significant digits is what a double holds exactly. */
function normalize(n: number): number {
  return Number.isInteger(n) ? n : Number(n.toPrecision(15));
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function better(type: string, a: unknown, b: unknown): boolean {
  return type === "min" ? (a as number) < (b as number) : (a as number) > (b as number);
}

function initialAggregate(rule: CompiledRule): unknown {
  return rule.type === "sum" || rule.type === "count" ? 0 : null;
}

class RequestLogic {
  readonly #engine: LogicEngine;
  readonly #c: Compiled;
  readonly #plan: WritePlan;
  readonly #req: LogicRequest;
  readonly #stats: LogicStats;
  readonly #recs = new Map<string, Rec>();
  #queue: Rec[] = [];
  #settleRounds = 0;
  /** Aggregate qualifications (`where`) already evaluated, by rule and row state. */
  readonly #whereCache = new Map<string, boolean>();

  constructor(engine: LogicEngine, c: Compiled, plan: WritePlan, req: LogicRequest, stats: LogicStats) {
    this.#engine = engine;
    this.#c = c;
    this.#plan = plan;
    this.#req = req;
    this.#stats = stats;
  }

  get #tables(): Map<string, TableLogic> {
    return this.#c.logic.tables;
  }

  async run(): Promise<void> {
    for (const change of this.#plan.changes) this.#startClientChange(change);
    await this.#propagate();
    await this.#settleAndCommit();
  }

  // ---- rows ---------------------------------------------------------------------------------

  #startClientChange(change: RowChange): void {
    const logic = this.#tables.get(change.table.name)!;
    const rec = this.#recFor(logic, change.id, change.resource, change.before, change.verb);
    if (change.verb === "UPDATE" && change.before && change.after) {
      for (const [column, rule] of logic.derived) {
        if (!sameValue(change.before[column], change.after[column])) {
          const attr = change.resource.attributeByColumn.get(column)?.name ?? column;
          throw errors.badAttribute(
            `Attribute '${attr}' is derived by the rule '${rule.name}' and cannot be set`,
          );
        }
      }
    }
    if (change.verb === "INSERT" && change.after && logic.aggregates.length > 0) {
      const after = { ...change.after };
      for (const a of logic.aggregates) after[a.column!] = initialAggregate(a);
      this.#plan.update(change.resource, change.after, after as RowDocument);
    }
    this.#enqueue(rec);
  }

  #recFor(
    logic: TableLogic,
    id: RowId,
    resource: ResourceModel,
    stored: RowDocument | null,
    verb?: Verb,
  ): Rec {
    const key = recKey(logic.name, id);
    let rec = this.#recs.get(key);
    if (rec) return rec;
    const change = this.#plan.planned(logic.table, id);
    const before = change ? change.before : stored;
    rec = {
      key,
      logic,
      id,
      resource: change?.resource ?? resource,
      before,
      seen: undefined,
      extra: new Set(),
      initialVerb: verb ?? change?.verb ?? (before ? "UPDATE" : "INSERT"),
      queued: false,
      contrib: new Map(),
      settled: undefined,
      settledRow: before,
    };
    this.#recs.set(key, rec);
    return rec;
  }

  #enqueue(rec: Rec): void {
    if (rec.queued) return;
    rec.queued = true;
    this.#queue.push(rec);
  }

  #note(rec: { logic: TableLogic; id: RowId }, rule: CompiledRule): void {
    this.#plan.noteRule(rec.logic.table, rec.id, { name: rule.name, type: rule.type });
  }

  /** The resource a row reached from `from` through `rel` is reported under (DESIGN.md §4.4). */
  #resourceVia(from: ResourceModel, rel: Relationship, to: "parent" | "child"): ResourceModel {
    const version = this.#req.version;
    const target = to === "parent" ? rel.parentTable : rel.childTable;
    if (from.via?.relationship === rel && from.via.kind === (to === "parent" ? "children" : "parent")) {
      const container = version.resources.get(from.name.slice(0, from.name.lastIndexOf(".")));
      if (container && container.table.name === target) return container;
    }
    const sub = from.subresources.find(
      (s) => s.via?.relationship === rel && s.via.kind === (to === "parent" ? "parent" : "children"),
    );
    return sub ?? version.resources.get(target)!;
  }

  #toRuleRow(table: TableModel, doc: RowDocument): RuleRow {
    const out: RuleRow = {};
    for (const c of table.columnOrder) out[c] = outputValue(table.columns.get(c)!, doc[c]);
    return out;
  }

  /** The row for rule code, with the parents it reads as `row.<role>`. */
  async #ruleRow(logic: TableLogic, doc: RowDocument, roles: Set<string>): Promise<RuleRow> {
    const row = this.#toRuleRow(logic.table, doc);
    for (const role of roles) {
      const rel = logic.table.parents.get(role)!;
      const parentTable = this.#tables.get(rel.parentTable)!.table;
      const pid = parentIdOf(parentTable, rel, doc);
      const parent = pid === null ? null : await this.#plan.current(parentTable, pid);
      row[role] = parent ? this.#toRuleRow(parentTable, parent) : null;
    }
    return row;
  }

  #rule(index: number): CompiledRule {
    return this.#c.byIndex.get(index)!;
  }

  #failure(rule: CompiledRule | undefined, message: string): ApiError {
    return ruleFailure(rule ? `Rule '${rule.name}' failed: ${message}` : `A rule failed: ${message}`);
  }

  /** One sandbox call; a rule error in the first `checked` answers fails the request. */
  async #call(tasks: Task[], checked = tasks.length): Promise<TaskResult[]> {
    this.#stats.sandboxCalls++;
    const results = await this.#engine.runtime.run(this.#c.program, tasks);
    for (const r of results.slice(0, checked)) {
      if (r?.error) throw this.#taskError(r.error);
    }
    return results;
  }

  #taskError(error: { rule: number; name: string; message: string }): ApiError {
    return this.#failure(this.#byIndexOrUndefined(error.rule), `${error.name}: ${error.message}`);
  }

  #byIndexOrUndefined(index: number): CompiledRule | undefined {
    return this.#c.byIndex.get(index);
  }

  // ---- propagation ----------------------------------------------------------------------------

  async #propagate(): Promise<void> {
    let waves = 0;
    while (this.#queue.length > 0) {
      if (++waves > this.#engine.limits.maxWaves) {
        throw ruleFailure(
          `The rules did not settle after ${waves - 1} rounds of changes; a chain of rules keeps changing rows`,
        );
      }
      this.#stats.waves++;
      const wave = this.#queue;
      this.#queue = [];
      const preps: Prep[] = [];
      for (const rec of wave) {
        rec.queued = false;
        const prep = await this.#prepare(rec);
        if (prep) preps.push(prep);
      }
      const tasks: Task[] = preps.filter((p) => p.task).map((p) => p.task!);
      const prefetch = tasks.length > 0 ? await this.#prefetchWheres(preps) : [];
      for (const { rule, doc } of prefetch) {
        const child = this.#tables.get(rule.rel!.childTable)!.table;
        tasks.push({ t: "where", rule: rule.index, rows: [this.#toRuleRow(child, doc)] });
      }
      const results = tasks.length > 0 ? await this.#call(tasks) : [];
      const passes = preps.filter((p) => p.task).length;
      prefetch.forEach(({ rule, doc }, j) => {
        this.#whereCache.set(this.#whereKey(rule, doc), results[passes + j]!.values[0]!);
      });
      let i = 0;
      for (const prep of preps) await this.#applyPass(prep, prep.task ? results[i++] : undefined);
    }
  }

  async #prepare(rec: Rec): Promise<Prep | undefined> {
    if (++this.#stats.rowPasses > this.#engine.limits.maxRowPasses) {
      throw ruleFailure(
        `The rules changed more than ${this.#engine.limits.maxRowPasses} rows in one request`,
      );
    }
    const { logic } = rec;
    const table = logic.table;
    const current = await this.#plan.current(table, rec.id);
    const firstVisit = rec.seen === undefined;
    if (rec.seen === null && current === null) return undefined;
    const base = firstVisit ? rec.before : rec.seen!;
    if (!current && !base) {
      rec.seen = null;
      return undefined;
    }
    const insertPass = firstVisit && rec.before === null;
    let dirty: Set<string> | null = null;
    if (!insertPass) {
      dirty = diffColumns(table, base, current);
      for (const e of rec.extra) dirty.add(e);
      if (!firstVisit && dirty.size === 0) return undefined;
    }
    rec.extra.clear();
    const isDirty = (c: string) => dirty === null || dirty.has(c);
    const deleted = current === null;

    if (!deleted) {
      for (const rule of logic.managedParents.values()) {
        if (rule.rel!.childColumns.some(isDirty)) await this.#ensureParent(rec, current, rule);
      }
    }
    const copies = deleted ? [] : logic.parentCopies.filter((r) => r.rel!.childColumns.some(isDirty));
    const formulasDue = !deleted && logic.formulas.some((f) => dirty === null || [...f.deps].some(isDirty));
    const early = logic.earlyEvents.length > 0 && (firstVisit || !deleted);
    const rowLogic = early || copies.length > 0 || formulasDue;
    const wheres: PassTask["wheres"] = [];
    for (const a of logic.feeds) {
      if (a.whereFn === undefined) continue;
      const inputs = [a.of, ...a.rel!.childColumns, ...a.deps].filter((c): c is string => !!c);
      if (!(rowLogic || deleted || insertPass || inputs.some(isDirty))) continue;
      const prev = this.#contribution(rec, a);
      if (prev && prev.qualified === undefined) prev.qualified = this.#cachedWhere(a, prev.src);
      const needOld = prev !== null && prev.qualified === undefined;
      const knownNew =
        deleted ||
        (!rowLogic &&
          current !== null &&
          (this.#cachedWhere(a, current) !== undefined ||
            (prev !== null && prev.qualified !== undefined && this.#sameInputs(a, prev.src, current))));
      if (!needOld && knownNew) continue;
      wheres.push({ rule: a.index, old: needOld });
    }
    if (!rowLogic && wheres.length === 0) return { rec, current, base };
    const shown = (deleted ? base : current)!;
    const task: PassTask = {
      t: "pass",
      table: table.name,
      row: rowLogic ? await this.#ruleRow(logic, shown, logic.passRoles) : this.#toRuleRow(table, shown),
      oldRow: rec.before ? this.#toRuleRow(table, rec.before) : null,
      verb: deleted ? "DELETE" : firstVisit ? rec.initialVerb : "UPDATE",
      initialVerb: rec.initialVerb,
      dirty: dirty ? [...dirty] : null,
      early,
      deleted,
      copies: copies.map((r) => r.index),
      wheres,
    };
    return { rec, current, base, task };
  }

  async #applyPass(prep: Prep, result: TaskResult | undefined): Promise<void> {
    const { rec, current, base } = prep;
    const { logic } = rec;
    const table = logic.table;
    // The state this pass computed; contributions and the next pass's diff start from it.
    let next = current;
    if (result) {
      for (const r of result.fired) this.#note(rec, this.#rule(r));
      if (current && !prep.task!.deleted) {
        const changes = this.#rowChanges(logic, current, result.row, result.fired);
        if (changes) {
          next = { ...current, ...changes, _ck: newChecksum() } as RowDocument;
          // Another row of this wave may have adjusted this one meanwhile (it is queued again then).
          const latest = await this.#plan.current(table, rec.id);
          if (latest === current) this.#plan.update(rec.resource, current, next);
          else if (latest) {
            this.#plan.update(rec.resource, latest, {
              ...latest,
              ...changes,
              _ck: newChecksum(),
            } as RowDocument);
          }
        }
      }
      for (const ins of result.inserts) await this.#insertFromRule(ins.rule, ins.table, ins.values);
    }
    rec.seen = next;
    for (const a of logic.feeds) {
      await this.#contribute(rec, a, next, result?.whereNew?.[a.index], result?.whereOld?.[a.index]);
    }
    if (next) {
      const changed = diffColumns(table, base, next);
      for (const cascade of logic.cascades) {
        const hit = [...changed].filter((c) => cascade.columns.has(c));
        if (hit.length === 0) continue;
        const childLogic = this.#tables.get(cascade.rel.childTable)!;
        const children =
          rec.before === null
            ? this.#plan
                .changesOf(childLogic.table)
                .filter((c) => c.after && parentIdOf(table, cascade.rel, c.after) === rec.id)
                .map((c) => c.after!)
            : await this.#plan.childrenOf(cascade.rel, next);
        const resource = this.#resourceVia(rec.resource, cascade.rel, "child");
        for (const child of children) {
          const crec = this.#recFor(childLogic, child._id, resource, child);
          for (const c of hit) crec.extra.add(`${cascade.rel.role}.${c}`);
          this.#enqueue(crec);
        }
      }
    }
  }

  /** Column values rule code changed, coerced to their types; null when nothing changed. */
  #rowChanges(
    logic: TableLogic,
    current: RowDocument,
    out: RuleRow,
    fired: number[],
  ): Record<string, unknown> | null {
    const table = logic.table;
    let changes: Record<string, unknown> | null = null;
    for (const c of table.columnOrder) {
      const column = table.columns.get(c)!;
      const value = out[c] ?? null;
      if (sameValue(value, outputValue(column, current[c]))) continue;
      const rule =
        logic.derived.get(c) ??
        logic.parentCopies.find((r) => r.column === c) ??
        logic.earlyEvents.find((r) => fired.includes(r.index));
      if (table.key.includes(c)) throw this.#failure(rule, `it changed the key attribute '${c}'`);
      let coerced: unknown;
      try {
        coerced = coerceValue(column, value, c);
      } catch (err) {
        throw this.#failure(rule, err instanceof Error ? err.message : String(err));
      }
      if (sameValue(coerced, current[c])) continue;
      changes ??= {};
      changes[c] = coerced;
    }
    return changes;
  }

  // ---- aggregates -----------------------------------------------------------------------------

  #initialContribution(rule: CompiledRule, doc: RowDocument | null): Contribution | null {
    if (!doc) return null;
    const parentTable = this.#tables.get(rule.rel!.parentTable)!.table;
    return {
      parent: parentIdOf(parentTable, rule.rel!, doc),
      qualified: rule.whereFn === undefined ? true : undefined,
      value: rule.of ? (doc[rule.of] ?? null) : null,
      src: doc,
    };
  }

  /** What the parent currently reflects of this row for `rule`. */
  #contribution(rec: Rec, rule: CompiledRule): Contribution | null {
    if (!rec.contrib.has(rule.index))
      rec.contrib.set(rule.index, this.#initialContribution(rule, rec.before));
    return rec.contrib.get(rule.index)!;
  }

  #sameInputs(rule: CompiledRule, a: RowDocument, b: RowDocument): boolean {
    return [...rule.deps].every((c) => sameValue(a[c], b[c]));
  }

  async #contribute(
    rec: Rec,
    rule: CompiledRule,
    next: RowDocument | null,
    qNew: boolean | undefined,
    qOld: boolean | undefined,
  ): Promise<void> {
    const prev = this.#contribution(rec, rule);
    if (next && qNew !== undefined) this.#whereCache.set(this.#whereKey(rule, next), qNew);
    if (prev && prev.qualified === undefined) prev.qualified = this.#cachedWhere(rule, prev.src);
    if (prev && prev.qualified === undefined) {
      if (qOld !== undefined && prev.src === rec.before) prev.qualified = qOld;
      else if (next && qNew !== undefined && this.#sameInputs(rule, prev.src, next)) prev.qualified = qNew;
    }
    let now: Contribution | null = null;
    if (next) {
      now = this.#initialContribution(rule, next)!;
      if (rule.whereFn !== undefined) {
        now.qualified = qNew ?? this.#cachedWhere(rule, next);
        if (
          now.qualified === undefined &&
          prev &&
          prev.qualified !== undefined &&
          this.#sameInputs(rule, prev.src, next)
        )
          now.qualified = prev.qualified;
      }
    }
    const effective = (c: Contribution | null) =>
      c && c.parent !== null && c.qualified !== false ? c : null;
    const pe = effective(prev);
    const ne = effective(now);
    if (
      (!pe && !ne) ||
      (pe && ne && pe.parent === ne.parent && sameValue(pe.value, ne.value) && pe.qualified === ne.qualified)
    ) {
      rec.contrib.set(rule.index, now);
      return;
    }
    if (pe && pe.qualified === undefined) pe.qualified = (await this.#evalWhere(rule, [pe.src]))[0];
    if (ne && ne.qualified === undefined) ne.qualified = (await this.#evalWhere(rule, [ne.src]))[0];
    rec.contrib.set(rule.index, now);
    await this.#adjust(rule, rec, pe?.qualified ? pe : null, ne?.qualified ? ne : null);
  }

  #whereKey(rule: CompiledRule, doc: RowDocument): string {
    return `${rule.index}\u0000${JSON.stringify(doc._id)}\u0000${doc._ck}`;
  }

  /** The cached qualification of `doc` for `rule`, if known. */
  #cachedWhere(rule: CompiledRule, doc: RowDocument): boolean | undefined {
    return rule.whereFn === undefined ? true : this.#whereCache.get(this.#whereKey(rule, doc));
  }

  async #evalWhere(rule: CompiledRule, docs: RowDocument[]): Promise<boolean[]> {
    const missing = docs.filter((d) => this.#cachedWhere(rule, d) === undefined);
    if (missing.length > 0) {
      const child = this.#tables.get(rule.rel!.childTable)!.table;
      const [result] = await this.#call([
        { t: "where", rule: rule.index, rows: missing.map((d) => this.#toRuleRow(child, d)) },
      ]);
      missing.forEach((d, i) => {
        this.#whereCache.set(this.#whereKey(rule, d), result!.values[i]!);
      });
    }
    return docs.map((d) => this.#cachedWhere(rule, d)!);
  }

  /**
   * Qualifications the next round will need, asked for in this round's sandbox
   * call: a row feeding a parent aggregate will adjust that parent, and the
   * parent's own contribution to its parent's aggregates depends on a `where`.
   */
  async #prefetchWheres(preps: Prep[]): Promise<{ rule: CompiledRule; doc: RowDocument }[]> {
    const wanted = new Map<string, { rule: CompiledRule; doc: RowDocument }>();
    for (const prep of preps) {
      if (!prep.task || !prep.current) continue;
      for (const a of prep.rec.logic.feeds) {
        const parentLogic = this.#tables.get(a.rel!.parentTable)!;
        if (!parentLogic.feeds.some((b) => b.whereFn !== undefined)) continue;
        const pid = parentIdOf(parentLogic.table, a.rel!, prep.current);
        const parent = pid === null ? null : await this.#plan.current(parentLogic.table, pid);
        if (!parent) continue;
        const prec = this.#recs.get(recKey(parentLogic.name, pid!));
        for (const b of parentLogic.feeds) {
          if (b.whereFn === undefined) continue;
          for (const doc of [parent, prec?.before ?? null]) {
            if (doc && this.#cachedWhere(b, doc) === undefined)
              wanted.set(this.#whereKey(b, doc), { rule: b, doc });
          }
        }
      }
    }
    return [...wanted.values()];
  }

  /** Moves a child's contribution from `prev` to `now` in the parent(s): one row update each. */
  async #adjust(
    rule: CompiledRule,
    rec: Rec,
    prev: Contribution | null,
    now: Contribution | null,
  ): Promise<void> {
    const parentLogic = this.#tables.get(rule.rel!.parentTable)!;
    const parentTable = parentLogic.table;
    const ops = new Map<RowId, { remove?: Contribution; add?: Contribution }>();
    if (prev) ops.set(prev.parent!, { remove: prev });
    if (now) ops.set(now.parent!, { ...ops.get(now.parent!), add: now });
    const column = rule.column!;
    const integer = parentTable.columns.get(column)!.type === "integer";
    for (const [pid, op] of ops) {
      const parent = await this.#plan.current(parentTable, pid);
      if (!parent) continue;
      const cur = parent[column] ?? null;
      let value: unknown = cur;
      if (rule.type === "sum") {
        const total = num(cur) - num(op.remove?.value) + num(op.add?.value);
        value = integer ? total : normalize(total);
      } else if (rule.type === "count") {
        value = num(cur) - (op.remove ? 1 : 0) + (op.add ? 1 : 0);
      } else {
        const removed = op.remove?.value ?? null;
        const added = op.add?.value ?? null;
        const leaves = removed !== null && (cur === null || !better(rule.type, cur, removed));
        // The extreme moved further out (or stayed): it is still the extreme, no rescan.
        if (leaves && cur !== null && added !== null && !better(rule.type, removed, added)) value = added;
        else if (leaves) value = await this.#rescan(rule, parent);
        else if (added !== null && (cur === null || better(rule.type, added, cur))) value = added;
      }
      await this.#setParentColumn(parentLogic, parent, column, value, rec, rule);
    }
  }

  /** min/max when the current extreme left: the extreme over what every child of `parent` contributes now. */
  async #rescan(rule: CompiledRule, parent: RowDocument): Promise<unknown> {
    const rel = rule.rel!;
    const childLogic = this.#tables.get(rel.childTable)!;
    const pid = parent._id;
    const query = Object.fromEntries(
      rel.childColumns.map((c, i) => [c, { $eq: parent[rel.parentColumns[i]!] }]),
    );
    const stored = await this.#plan.findStored(childLogic.table, query);
    const items: Contribution[] = [];
    const visited = new Set<string>();
    for (const doc of stored) {
      const key = recKey(childLogic.name, doc._id);
      visited.add(key);
      const rec = this.#recs.get(key);
      const c = rec ? this.#contribution(rec, rule) : this.#initialContribution(rule, doc);
      if (c && c.parent === pid) items.push(c);
    }
    for (const rec of this.#recs.values()) {
      if (rec.logic !== childLogic || visited.has(rec.key)) continue;
      const c = this.#contribution(rec, rule);
      if (c && c.parent === pid) items.push(c);
    }
    const unknown = items.filter((c) => c.qualified === undefined);
    const values = await this.#evalWhere(
      rule,
      unknown.map((c) => c.src),
    );
    unknown.forEach((c, i) => {
      c.qualified = values[i];
    });
    let extreme: unknown = null;
    for (const c of items) {
      if (!c.qualified || c.value === null || c.value === undefined) continue;
      if (extreme === null || better(rule.type, c.value, extreme)) extreme = c.value;
    }
    return extreme;
  }

  async #setParentColumn(
    parentLogic: TableLogic,
    parent: RowDocument,
    column: string,
    value: unknown,
    via: Rec,
    rule: CompiledRule,
  ): Promise<void> {
    const resource = this.#resourceVia(via.resource, rule.rel!, "parent");
    const prec = this.#recFor(parentLogic, parent._id, resource, parent);
    this.#note(prec, rule);
    if (sameValue(parent[column] ?? null, value)) return;
    const next = { ...parent, [column]: value, _ck: newChecksum() } as RowDocument;
    this.#plan.update(prec.resource, parent, next);
    this.#enqueue(prec);
  }

  // ---- inserts by rules -----------------------------------------------------------------------

  /** A new row for `logic.table` from column values: defaults, generated key, checks; aggregates start empty. */
  async #newRow(
    logic: TableLogic,
    values: unknown,
    fail: (message: string) => ApiError,
  ): Promise<RowDocument> {
    const table = logic.table;
    if (values === null || typeof values !== "object" || Array.isArray(values)) {
      throw fail("the values must be an object");
    }
    const row: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
      const column = table.columns.get(name);
      if (!column) throw fail(`'${name}' is not an attribute of '${table.name}'`);
      try {
        row[name] = coerceValue(column, value, name);
      } catch (err) {
        throw fail(err instanceof Error ? err.message : String(err));
      }
    }
    for (const column of table.columns.values()) {
      if (row[column.name] === undefined && column.default !== undefined) {
        row[column.name] = coerceValue(column, column.default, column.name);
      }
    }
    const gen = table.generatedColumn;
    if (gen && (row[gen] === undefined || row[gen] === null)) row[gen] = await this.#plan.nextSequence(table);
    for (const a of logic.aggregates) row[a.column!] = initialAggregate(a);
    for (const column of table.columns.values()) {
      const missing = row[column.name] === undefined || row[column.name] === null;
      if (missing && (column.required || table.key.includes(column.name))) {
        throw fail(`attribute '${column.name}' of '${table.name}' is required`);
      }
    }
    for (const [role, rel] of table.parents) {
      if (logic.managedParents.has(role)) continue;
      const parentTable = this.#tables.get(rel.parentTable)!.table;
      const pid = parentIdOf(parentTable, rel, row);
      if (pid !== null && !(await this.#plan.current(parentTable, pid))) {
        throw fail(`no '${rel.parentTable}' with key ${String(pid)} exists for '${role}'`);
      }
    }
    const id = rowId(table, row);
    if (await this.#plan.current(table, id))
      throw fail(`an object with key ${String(id)} already exists in '${table.name}'`);
    return { ...row, _id: id, _ck: newChecksum() } as RowDocument;
  }

  async #insertFromRule(ruleIndex: number, tableName: string, values: unknown): Promise<void> {
    const rule = this.#byIndexOrUndefined(ruleIndex);
    const logic = this.#tables.get(tableName);
    if (!logic) throw this.#failure(rule, `logicContext.insert: there is no table '${tableName}'`);
    const doc = await this.#newRow(logic, values, (m) =>
      this.#failure(rule, `logicContext.insert('${tableName}'): ${m}`),
    );
    const resource = this.#req.version.resources.get(tableName)!;
    this.#plan.insert(resource, doc);
    const rec = this.#recFor(logic, doc._id, resource, null, "INSERT");
    this.#enqueue(rec);
  }

  /** managedParent: a child points to a parent that does not exist, so the parent is created. */
  async #ensureParent(rec: Rec, row: RowDocument, rule: CompiledRule): Promise<void> {
    const rel = rule.rel!;
    const parentLogic = this.#tables.get(rel.parentTable)!;
    const pid = parentIdOf(parentLogic.table, rel, row);
    if (pid === null || (await this.#plan.current(parentLogic.table, pid))) return;
    const values = Object.fromEntries(rel.parentColumns.map((c, i) => [c, row[rel.childColumns[i]!]]));
    const doc = await this.#newRow(parentLogic, values, (m) =>
      this.#failure(rule, `the '${rel.role}' parent could not be created: ${m}`),
    );
    const resource = this.#resourceVia(rec.resource, rel, "parent");
    this.#plan.insert(resource, doc);
    const prec = this.#recFor(parentLogic, doc._id, resource, null, "INSERT");
    this.#note(prec, rule);
    this.#enqueue(prec);
  }

  // ---- validations and events -----------------------------------------------------------------

  /**
   * Settling rounds: validations and events of every row whose state was not
   * yet settled. The commit validations and commit events are sent in the same
   * sandbox call, on the same (final, unless events insert rows) state; when
   * events did insert rows, those answers are dropped and asked for again after
   * the new rows' logic.
   */
  async #settleAndCommit(): Promise<void> {
    for (;;) {
      const row = await this.#settleTasks("row");
      const commit = await this.#settleTasks("commit");
      if (row.tasks.length + commit.tasks.length === 0) return;
      if (row.tasks.length > 0 && ++this.#settleRounds > this.#engine.limits.maxSettleRounds) {
        throw ruleFailure(
          `The rules did not settle after ${this.#engine.limits.maxSettleRounds} rounds of events inserting rows`,
        );
      }
      const results = await this.#call([...row.tasks, ...commit.tasks], row.tasks.length);
      let inserted = false;
      for (const [i, result] of results.slice(0, row.tasks.length).entries()) {
        const { rec, ck, state } = row.pending[i]!;
        for (const r of result.fired) this.#note(rec, this.#rule(r));
        if (result.failed !== undefined)
          throw this.#validationFailed(this.#rule(result.failed), row.tasks[i]!.row);
        for (const ins of result.inserts) {
          await this.#insertFromRule(ins.rule, ins.table, ins.values);
          inserted = true;
        }
        rec.settled = ck;
        rec.settledRow = state;
      }
      if (inserted) {
        await this.#propagate();
        continue;
      }
      for (const [i, result] of results.slice(row.tasks.length).entries()) {
        if (result.error) throw this.#taskError(result.error);
        const { rec } = commit.pending[i]!;
        for (const r of result.fired) this.#note(rec, this.#rule(r));
        if (result.failed !== undefined) {
          throw this.#validationFailed(this.#rule(result.failed), commit.tasks[i]!.row);
        }
      }
      return;
    }
  }

  /** Validations and events (`row`) or commit validations, then commit events (`commit`), of changed rows. */
  async #settleTasks(
    phase: "row" | "commit",
  ): Promise<{ tasks: SettleTask[]; pending: { rec: Rec; ck: string | null; state: RowDocument | null }[] }> {
    const tasks: SettleTask[] = [];
    const pending: { rec: Rec; ck: string | null; state: RowDocument | null }[] = [];
    const parts = phase === "row" ? [undefined] : (["validations", "events"] as const);
    for (const part of parts) {
      for (const change of this.#plan.changes) {
        const logic = this.#tables.get(change.table.name)!;
        const rec = this.#recFor(logic, change.id, change.resource, change.before, change.verb);
        const ck = change.after ? change.after._ck : null;
        if (phase === "row" && rec.settled === ck) continue;
        const validations =
          phase === "row" ? logic.validations : part === "validations" ? logic.commitValidations : [];
        const events = phase === "row" ? logic.events : part === "events" ? logic.commitEvents : [];
        if ((change.after ? validations.length : 0) + events.length === 0) {
          if (phase === "row") {
            rec.settled = ck;
            rec.settledRow = change.after;
          }
          continue;
        }
        const state = (change.after ?? change.before)!;
        const roles = phase === "row" ? logic.settleRoles : logic.commitRoles;
        const old = phase === "row" && rec.settled !== undefined ? rec.settledRow : rec.before;
        tasks.push({
          t: "settle",
          table: logic.name,
          row: await this.#ruleRow(logic, state, roles),
          oldRow: old ? this.#toRuleRow(logic.table, old) : null,
          verb:
            rec.settled === undefined || phase === "commit"
              ? change.verb
              : change.after
                ? "UPDATE"
                : "DELETE",
          initialVerb: rec.initialVerb,
          deleted: !change.after,
          phase,
          part,
        });
        pending.push({ rec, ck, state: change.after });
      }
    }
    return { tasks, pending };
  }

  #validationFailed(rule: CompiledRule, row: RuleRow): ApiError {
    const text = rule.message ?? `Validation '${rule.name}' failed`;
    const message = text.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => {
      if (!(name in row)) return whole;
      const v = row[name];
      return v === null || v === undefined ? "null" : typeof v === "object" ? JSON.stringify(v) : String(v);
    });
    return errors.validationFailed(message);
  }
}
