/**
 * One request's run of the rules (docs/rules.md, "How a request runs"), on
 * its WritePlan after the client's objects are planned and before anything is
 * written:
 *
 * 1. Propagation, in waves until nothing changes: for each changed row, its
 *    early events, parent copies (at insert / re-parent) and the formulas whose
 *    inputs changed, in dependency order; then the row's contribution to each
 *    parent aggregate is adjusted (aggregate-maintenance.ts). A changed parent
 *    attribute that children's formulas read cascades to those children. A
 *    child pointing to a missing managed parent, and rule code's inserts,
 *    create rows (rule-inserts.ts). Every wave is one sandbox call
 *    (rule-calls.ts).
 * 2. Settling: validations and events of every changed row, on its final
 *    state; rows that events insert go back to 1. Then commit validations and
 *    commit events over the final state (settle-stage.ts).
 *
 * LogicRun holds the run's shared state (run-state.ts): the rows it tracks
 * (tracked-rows.ts), the queue of the next wave and the statistics. Parent
 * rows are read once per request (WritePlan caches them).
 */
import { errors } from "../../../../shared/errors.ts";
import { coerceValue, outputValue } from "../domain/model/column-values.ts";
import type { ResourceModel } from "../domain/model/project-model.ts";
import type { CompiledRule, TableLogic } from "../domain/model/rule-model.ts";
import { newChecksum, parentIdOf, type RowChange, type WritePlan } from "../domain/write/write-plan.ts";
import type { RowDocument, RowId } from "../store/tenant-rows.ts";
import { AggregateMaintenance } from "./aggregate-maintenance.ts";
import { initialAggregates } from "./aggregate-values.ts";
import { descendantsOf, toRuleRow } from "./parent-rows.ts";
import type { PassResult, PassTask, RuleRow } from "./program.ts";
import { diffColumns, sameValue } from "./row-diff.ts";
import { RuleCalls } from "./rule-calls.ts";
import { RuleInserts } from "./rule-inserts.ts";
import {
  type CompiledLogic,
  type LogicLimits,
  type LogicRequest,
  type LogicStats,
  type RunState,
  resourceVia,
} from "./run-state.ts";
import { type RuleRuntime, ruleFailure } from "./runtime.ts";
import { SettleStage } from "./settle-stage.ts";
import { type PreparedPass, type TrackedRow, TrackedRows } from "./tracked-rows.ts";

export class LogicRun implements RunState {
  readonly plan: WritePlan;
  readonly request: LogicRequest;
  readonly limits: LogicLimits;
  readonly trackedRows: TrackedRows;
  readonly #compiled: CompiledLogic;
  readonly #stats: LogicStats;
  #queue: TrackedRow[] = [];
  readonly #calls: RuleCalls;
  readonly #aggregates: AggregateMaintenance;
  readonly #inserts: RuleInserts;
  readonly #settle: SettleStage;

  constructor(
    engine: { runtime: RuleRuntime; limits: LogicLimits },
    compiled: CompiledLogic,
    plan: WritePlan,
    request: LogicRequest,
    stats: LogicStats,
  ) {
    this.limits = engine.limits;
    this.#compiled = compiled;
    this.plan = plan;
    this.request = request;
    this.#stats = stats;
    this.trackedRows = new TrackedRows(plan);
    this.#calls = new RuleCalls(engine.runtime, compiled, plan, stats);
    this.#aggregates = new AggregateMaintenance(this, this.#calls);
    this.#inserts = new RuleInserts(this, this.#calls);
    this.#settle = new SettleStage(this, this.#calls, this.#inserts, () => this.#propagate());
  }

  get tables(): Map<string, TableLogic> {
    return this.#compiled.logic.tables;
  }

  logicOf(table: string): TableLogic {
    const logic = this.tables.get(table);
    if (!logic) throw new Error(`The rules have no logic for table '${table}'`);
    return logic;
  }

  async run(): Promise<void> {
    for (const change of this.plan.changes) this.#startClientChange(change);
    await this.#propagate();
    await this.#settle.settleAndCommit();
  }

  // ---- rows ---------------------------------------------------------------------------------

  #startClientChange(change: RowChange): void {
    const logic = this.logicOf(change.table.name);
    const tracked = this.trackedRows.track(logic, change.id, change.resource, change.before, change.verb);
    if (change.verb === "UPDATE" && change.before && change.after) {
      for (const [column, rule] of logic.derived) {
        if (!sameValue(change.before[column], change.after[column])) {
          const attribute = change.resource.attributeByColumn.get(column)?.name ?? column;
          throw errors.badAttribute(
            `Attribute '${attribute}' is derived by the rule '${rule.name}' and cannot be set`,
          );
        }
      }
    }
    if (change.verb === "INSERT" && change.after && logic.aggregates.length > 0) {
      const after = { ...change.after, ...initialAggregates(logic) } as RowDocument;
      this.plan.update(change.resource, change.after, after);
    }
    this.enqueue(tracked);
  }

  enqueue(tracked: TrackedRow): void {
    if (tracked.queued) return;
    tracked.queued = true;
    this.#queue.push(tracked);
  }

  noteRule(row: { logic: TableLogic; id: RowId }, rule: CompiledRule): void {
    this.plan.noteRule(row.logic.table, row.id, { name: rule.name, type: rule.type });
  }

  // ---- propagation ----------------------------------------------------------------------------

  async #propagate(): Promise<void> {
    let waves = 0;
    while (this.#queue.length > 0) {
      if (++waves > this.limits.maxWaves) {
        throw ruleFailure(
          `The rules did not settle after ${waves - 1} rounds of changes; a chain of rules keeps changing rows`,
        );
      }
      this.#stats.waves++;
      const wave = this.#queue;
      this.#queue = [];
      const passes: PreparedPass[] = [];
      for (const tracked of wave) {
        tracked.queued = false;
        const pass = await this.#prepare(tracked);
        if (pass) passes.push(pass);
      }
      const sent = passes.flatMap((pass) => (pass.task ? [{ pass, task: pass.task }] : []));
      const prefetched = sent.length > 0 ? await this.#aggregates.prefetchWheres(passes) : [];
      const whereTasks = this.#aggregates.whereTasks(prefetched);
      const answers =
        sent.length + whereTasks.length > 0
          ? await this.#calls.wave(
              sent.map(({ task }) => task),
              whereTasks,
            )
          : { passes: [], wheres: [] };
      this.#aggregates.rememberWheres(prefetched, answers.wheres);
      const results = new Map(sent.map(({ pass }, i) => [pass, answers.passes[i]]));
      for (const pass of passes) await this.#applyPass(pass, results.get(pass));
    }
  }

  async #prepare(tracked: TrackedRow): Promise<PreparedPass | undefined> {
    if (++this.#stats.rowPasses > this.limits.maxRowPasses) {
      throw ruleFailure(`The rules changed more than ${this.limits.maxRowPasses} rows in one request`);
    }
    const { logic } = tracked;
    const table = logic.table;
    const current = await this.plan.current(table, tracked.id);
    const { seen } = tracked;
    const firstVisit = seen === undefined;
    if (seen === null && current === null) return undefined;
    const base = seen === undefined ? tracked.before : seen;
    // The row as the pass shows it to rule code: its current state, or the last one it had when deleted.
    const shown = current ?? base;
    if (!shown) {
      tracked.seen = null;
      return undefined;
    }
    const insertPass = firstVisit && tracked.before === null;
    let dirty: Set<string> | null = null;
    if (!insertPass) {
      dirty = diffColumns(table, base, current);
      for (const marker of tracked.extra) dirty.add(marker);
      if (!firstVisit && dirty.size === 0) return undefined;
    }
    tracked.extra.clear();
    const isDirty = (column: string) => dirty === null || dirty.has(column);
    const deleted = current === null;

    if (!deleted) {
      for (const rule of logic.managedParents.values()) {
        if (rule.rel.childColumns.some(isDirty)) await this.#inserts.ensureParent(tracked, current, rule);
      }
    }
    const copies = deleted ? [] : logic.parentCopies.filter((rule) => rule.rel.childColumns.some(isDirty));
    const formulasDue =
      !deleted && logic.formulas.some((formula) => dirty === null || [...formula.deps].some(isDirty));
    const early = logic.earlyEvents.length > 0 && (firstVisit || !deleted);
    const rowLogic = early || copies.length > 0 || formulasDue;
    const wheres = this.#aggregates.wheresToAsk(tracked, current, { rowLogic, deleted, insertPass, isDirty });
    if (!rowLogic && wheres.length === 0) return { tracked, current, base };
    const task: PassTask = {
      t: "pass",
      table: table.name,
      row: rowLogic ? this.#calls.ruleRow(logic, shown, logic.passRoles) : toRuleRow(table, shown),
      oldRow: tracked.before ? toRuleRow(table, tracked.before) : null,
      verb: deleted ? "DELETE" : firstVisit ? tracked.initialVerb : "UPDATE",
      initialVerb: tracked.initialVerb,
      dirty: dirty ? [...dirty] : null,
      early,
      deleted,
      copies: copies.map((rule) => rule.index),
      wheres,
    };
    return { tracked, current, base, task };
  }

  async #applyPass(pass: PreparedPass, result: PassResult | undefined): Promise<void> {
    const { tracked, current, base } = pass;
    const { logic } = tracked;
    const table = logic.table;
    // The state this pass computed; contributions and the next pass's diff start from it.
    let next = current;
    if (result) {
      for (const fired of result.fired) this.noteRule(tracked, this.#calls.rule(fired));
      if (current) {
        const changes = this.#rowChanges(logic, current, result.row, result.fired);
        if (changes) {
          next = { ...current, ...changes, _ck: newChecksum() } as RowDocument;
          // Another row of this wave may have adjusted this one meanwhile (it is queued again then).
          const latest = await this.plan.current(table, tracked.id);
          if (latest === current) this.plan.update(tracked.resource, current, next);
          else if (latest) {
            this.plan.update(tracked.resource, latest, {
              ...latest,
              ...changes,
              _ck: newChecksum(),
            } as RowDocument);
          }
        }
      }
      for (const insert of result.inserts)
        await this.#inserts.insertFromRule(insert.rule, insert.table, insert.values);
    }
    tracked.seen = next;
    for (const aggregate of logic.feeds) {
      await this.#aggregates.contribute(
        tracked,
        aggregate,
        next,
        result?.whereNew?.[aggregate.index],
        result?.whereOld?.[aggregate.index],
      );
    }
    if (next) {
      const version = this.request.version;
      const changed = diffColumns(table, base, next);
      for (const cascade of logic.cascades) {
        const hit = [...changed].filter((column) => cascade.columns.has(column));
        if (hit.length === 0) continue;
        const childLogic = this.logicOf(cascade.rel.childTable);
        const children =
          tracked.before === null
            ? this.plan
                .changesOf(childLogic.table)
                .flatMap(({ after }) =>
                  after && parentIdOf(table, cascade.rel, after) === tracked.id ? [after] : [],
                )
            : await this.plan.childrenOf(cascade.rel, next);
        const resource = resourceVia(version, tracked.resource, cascade.rel, "child");
        this.#requeueChildren(childLogic, resource, children, hit, cascade.rel.role);
      }
      for (const deep of logic.deepCascades) {
        const hit = [...changed].filter((column) => deep.columns.has(column));
        if (hit.length === 0) continue;
        const deepest = deep.rels.at(-1);
        if (!deepest) continue;
        const childLogic = this.logicOf(deepest.childTable);
        let resource = tracked.resource;
        for (const rel of deep.rels) resource = resourceVia(version, resource, rel, "child");
        const descendants = await descendantsOf(this.plan, deep.rels, next);
        this.#requeueChildren(childLogic, resource, descendants, hit, deep.prefix);
      }
    }
  }

  /**
   * Queues the rows below a changed row for another pass, marking the parent attributes they
   * read that changed (`<path>.<column>`, what their formulas depend on) as dirty.
   */
  #requeueChildren(
    childLogic: TableLogic,
    resource: ResourceModel,
    children: RowDocument[],
    changedColumns: string[],
    path: string,
  ): void {
    for (const child of children) {
      const childTracked = this.trackedRows.track(childLogic, child._id, resource, child);
      for (const column of changedColumns) childTracked.extra.add(`${path}.${column}`);
      this.enqueue(childTracked);
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
    for (const name of table.columnOrder) {
      const column = table.columns.get(name);
      if (!column) continue;
      const value = out[name] ?? null;
      if (sameValue(value, outputValue(column, current[name]))) continue;
      const rule =
        logic.derived.get(name) ??
        logic.parentCopies.find((copy) => copy.column === name) ??
        logic.earlyEvents.find((event) => fired.includes(event.index));
      if (table.key.includes(name)) throw this.#calls.failure(rule, `it changed the key attribute '${name}'`);
      let coerced: unknown;
      try {
        coerced = coerceValue(column, value, name);
      } catch (err) {
        throw this.#calls.failure(rule, err instanceof Error ? err.message : String(err));
      }
      if (sameValue(coerced, current[name])) continue;
      changes ??= {};
      changes[name] = coerced;
    }
    return changes;
  }
}
