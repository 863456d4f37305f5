/**
 * Parent aggregates (sum, count, min, max) kept by adjustment during one
 * request's run of the rules (logic-run.ts; docs/rules.md): after a row's
 * pass, its contribution to each parent aggregate is compared with what the
 * parent already reflects, and the parent is adjusted by the difference
 * (sum/count: a one-row update; min/max: a rescan of that parent's children
 * only when the extreme leaves). A parent whose aggregate changed is queued
 * for a pass of its own.
 *
 * An aggregate's `where` is rule code: its answers are cached by rule and row
 * state, asked for in the pass's own sandbox call when they can be (and, for
 * the parents a wave's rows feed, in that wave's call), and otherwise in a
 * sandbox call of their own. Aggregates never re-read all children except
 * for a min/max rescan.
 */
import type { TableModel } from "../domain/model/project-model.ts";
import type { AggregateRule, TableLogic } from "../domain/model/rule-model.ts";
import { childrenQuery } from "../domain/read/query-builder.ts";
import { newChecksum, parentIdOf } from "../domain/write/write-plan.ts";
import type { RowDocument, RowId } from "../store/tenant-rows.ts";
import { adjustedAggregate, better, type Contribution, contributionOf } from "./aggregate-values.ts";
import { toRuleRow } from "./parent-rows.ts";
import type { PassTask, WhereResult, WhereTask } from "./program.ts";
import { sameValue } from "./row-diff.ts";
import type { RuleCalls } from "./rule-calls.ts";
import { type RunState, resourceVia } from "./run-state.ts";
import { type PreparedPass, type TrackedRow, trackedRowKey } from "./tracked-rows.ts";

/** A contribution the parent's aggregate counts: the row has a parent, and its `where` did not fail. */
type Counted = Contribution & { parent: RowId };

function counts(contribution: Contribution | null): contribution is Counted {
  return contribution !== null && contribution.parent !== null && contribution.qualified !== false;
}

/** A `where` answer the next wave will need: `rule`'s qualification of `doc`. */
export interface PrefetchedWhere {
  rule: AggregateRule;
  doc: RowDocument;
}

/** What a row's pass is about to do, as far as its `where` answers depend on it. */
export interface PassShape {
  /** The pass runs the row's own logic (early events, parent copies or formulas). */
  rowLogic: boolean;
  deleted: boolean;
  /** The first pass of a row the request inserted. */
  insertPass: boolean;
  isDirty: (column: string) => boolean;
}

export class AggregateMaintenance {
  readonly #state: RunState;
  readonly #calls: RuleCalls;
  /** Aggregate qualifications (`where`) already evaluated, by rule and row state. */
  readonly #whereCache = new Map<string, boolean>();

  constructor(state: RunState, calls: RuleCalls) {
    this.#state = state;
    this.#calls = calls;
  }

  /** The aggregates over the row's table whose `where` the row's pass must ask for (on the new row, and on the old one when `old`). */
  wheresToAsk(tracked: TrackedRow, current: RowDocument | null, pass: PassShape): PassTask["wheres"] {
    const { rowLogic, deleted, insertPass, isDirty } = pass;
    const wheres: PassTask["wheres"] = [];
    for (const aggregate of tracked.logic.feeds) {
      if (aggregate.whereFn === undefined) continue;
      const inputs = [
        ...(aggregate.of ? [aggregate.of] : []),
        ...aggregate.rel.childColumns,
        ...aggregate.deps,
      ];
      if (!(rowLogic || deleted || insertPass || inputs.some(isDirty))) continue;
      const previous = this.#contribution(tracked, aggregate);
      if (previous && previous.qualified === undefined)
        previous.qualified = this.#cachedWhere(aggregate, previous.src);
      const needOld = previous !== null && previous.qualified === undefined;
      const knownNew =
        deleted ||
        (!rowLogic &&
          current !== null &&
          (this.#cachedWhere(aggregate, current) !== undefined ||
            (previous !== null &&
              previous.qualified !== undefined &&
              this.#sameInputs(aggregate, previous.src, current))));
      if (!needOld && knownNew) continue;
      wheres.push({ rule: aggregate.index, old: needOld });
    }
    return wheres;
  }

  /**
   * Qualifications the next round will need, asked for in this round's sandbox
   * call: a row feeding a parent aggregate will adjust that parent, and the
   * parent's own contribution to its parent's aggregates depends on a `where`.
   */
  async prefetchWheres(passes: PreparedPass[]): Promise<PrefetchedWhere[]> {
    const wanted = new Map<string, PrefetchedWhere>();
    const fed = this.#fedParents(passes);
    const ids = new Map<TableModel, RowId[]>();
    for (const { parentLogic, parentId } of fed) {
      const list = ids.get(parentLogic.table);
      if (list) list.push(parentId);
      else ids.set(parentLogic.table, [parentId]);
    }
    await Promise.all([...ids].map(([table, list]) => this.#state.plan.prefetch(table, list)));
    for (const { parentLogic, parentId } of fed) {
      const parent = await this.#state.plan.current(parentLogic.table, parentId);
      if (!parent) continue;
      const parentTracked = this.#state.trackedRows.get(trackedRowKey(parentLogic.name, parentId));
      for (const parentAggregate of parentLogic.feeds) {
        if (parentAggregate.whereFn === undefined) continue;
        for (const doc of [parent, parentTracked?.before ?? null]) {
          if (doc && this.#cachedWhere(parentAggregate, doc) === undefined)
            wanted.set(this.#whereKey(parentAggregate, doc), { rule: parentAggregate, doc });
        }
      }
    }
    return [...wanted.values()];
  }

  /** The sandbox tasks that ask for prefetched qualifications, one per row. */
  whereTasks(prefetched: PrefetchedWhere[]): WhereTask[] {
    return prefetched.map(({ rule, doc }) => this.#whereTask(rule, [doc]));
  }

  /** A sandbox task asking `rule`'s `where` of child rows. */
  #whereTask(rule: AggregateRule, docs: RowDocument[]): WhereTask {
    const child = this.#state.logicOf(rule.rel.childTable).table;
    return { t: "where", rule: rule.index, rows: docs.map((doc) => toRuleRow(child, doc)) };
  }

  /** Caches the answers of `whereTasks(prefetched)`, in the same order. */
  rememberWheres(prefetched: PrefetchedWhere[], results: WhereResult[]): void {
    prefetched.forEach(({ rule, doc }, position) => {
      this.#remember(rule, [doc], results[position]);
    });
  }

  /** Caches a where task's answer about `docs` (one value per row, in order). */
  #remember(rule: AggregateRule, docs: RowDocument[], result: WhereResult | undefined): void {
    if (result?.values.length !== docs.length)
      throw new Error(
        `The rule program answered the 'where' of rule ${rule.index} for other rows than asked`,
      );
    docs.forEach((doc, position) => {
      const qualified = result.values[position];
      if (qualified !== undefined) this.#whereCache.set(this.#whereKey(rule, doc), qualified);
    });
  }

  /**
   * After a row's pass: moves its contribution to `rule`'s parent from what the parent reflects
   * to what `next` contributes, with the `where` answers of the pass (new and old row) if asked.
   */
  async contribute(
    tracked: TrackedRow,
    rule: AggregateRule,
    next: RowDocument | null,
    qualifiedNew: boolean | undefined,
    qualifiedOld: boolean | undefined,
  ): Promise<void> {
    const previous = this.#contribution(tracked, rule);
    if (next && qualifiedNew !== undefined) this.#whereCache.set(this.#whereKey(rule, next), qualifiedNew);
    if (previous && previous.qualified === undefined)
      previous.qualified = this.#cachedWhere(rule, previous.src);
    if (previous && previous.qualified === undefined) {
      if (qualifiedOld !== undefined && previous.src === tracked.before) previous.qualified = qualifiedOld;
      else if (next && qualifiedNew !== undefined && this.#sameInputs(rule, previous.src, next))
        previous.qualified = qualifiedNew;
    }
    let now: Contribution | null = null;
    if (next) {
      now = this.#contributionOf(rule, next);
      if (rule.whereFn !== undefined) {
        now.qualified = qualifiedNew ?? this.#cachedWhere(rule, next);
        if (
          now.qualified === undefined &&
          previous &&
          previous.qualified !== undefined &&
          this.#sameInputs(rule, previous.src, next)
        )
          now.qualified = previous.qualified;
      }
    }
    const counted = counts(previous) ? previous : null;
    const toCount = counts(now) ? now : null;
    if (
      (!counted && !toCount) ||
      (counted &&
        toCount &&
        counted.parent === toCount.parent &&
        sameValue(counted.value, toCount.value) &&
        counted.qualified === toCount.qualified)
    ) {
      tracked.appliedContributions.set(rule.index, now);
      return;
    }
    if (counted && counted.qualified === undefined)
      counted.qualified = (await this.#evalWhere(rule, [counted.src]))[0];
    if (toCount && toCount.qualified === undefined)
      toCount.qualified = (await this.#evalWhere(rule, [toCount.src]))[0];
    tracked.appliedContributions.set(rule.index, now);
    await this.#adjust(
      rule,
      tracked,
      counted?.qualified ? counted : null,
      toCount?.qualified ? toCount : null,
    );
  }

  #contributionOf(rule: AggregateRule, doc: RowDocument): Contribution {
    return contributionOf(rule, this.#state.logicOf(rule.rel.parentTable).table, doc);
  }

  /** What the parent currently reflects of this row for `rule`. */
  #contribution(tracked: TrackedRow, rule: AggregateRule): Contribution | null {
    const applied = tracked.appliedContributions.get(rule.index);
    if (applied !== undefined) return applied;
    const stored = tracked.before && this.#contributionOf(rule, tracked.before);
    tracked.appliedContributions.set(rule.index, stored);
    return stored;
  }

  #sameInputs(rule: AggregateRule, first: RowDocument, second: RowDocument): boolean {
    return [...rule.deps].every((column) => sameValue(first[column], second[column]));
  }

  #whereKey(rule: AggregateRule, doc: RowDocument): string {
    return `${rule.index}\u0000${JSON.stringify(doc._id)}\u0000${doc._ck}`;
  }

  /** The cached qualification of `doc` for `rule`, if known. */
  #cachedWhere(rule: AggregateRule, doc: RowDocument): boolean | undefined {
    return rule.whereFn === undefined ? true : this.#whereCache.get(this.#whereKey(rule, doc));
  }

  async #evalWhere(rule: AggregateRule, docs: RowDocument[]): Promise<boolean[]> {
    const missing = docs.filter((doc) => this.#cachedWhere(rule, doc) === undefined);
    if (missing.length > 0) {
      const { wheres } = await this.#calls.wave([], [this.#whereTask(rule, missing)]);
      this.#remember(rule, missing, wheres[0]);
    }
    return docs.map((doc) => {
      const qualified = this.#cachedWhere(rule, doc);
      if (qualified === undefined) throw new Error(`The 'where' of rule ${rule.index} was not answered`);
      return qualified;
    });
  }

  /** The parents the wave's rows feed whose own contribution to their parents depends on a `where`. */
  #fedParents(passes: PreparedPass[]): { parentLogic: TableLogic; parentId: RowId }[] {
    const out: { parentLogic: TableLogic; parentId: RowId }[] = [];
    for (const pass of passes) {
      if (!pass.task || !pass.current) continue;
      for (const aggregate of pass.tracked.logic.feeds) {
        const parentLogic = this.#state.logicOf(aggregate.rel.parentTable);
        if (!parentLogic.feeds.some((parentAggregate) => parentAggregate.whereFn !== undefined)) continue;
        const parentId = parentIdOf(parentLogic.table, aggregate.rel, pass.current);
        if (parentId !== null) out.push({ parentLogic, parentId });
      }
    }
    return out;
  }

  /** Moves a child's contribution from `previous` to `now` in the parent(s): one row update each. */
  async #adjust(
    rule: AggregateRule,
    tracked: TrackedRow,
    previous: Counted | null,
    now: Counted | null,
  ): Promise<void> {
    const parentLogic = this.#state.logicOf(rule.rel.parentTable);
    const parentTable = parentLogic.table;
    const changes = new Map<RowId, { remove?: Contribution; add?: Contribution }>();
    if (previous) changes.set(previous.parent, { remove: previous });
    if (now) changes.set(now.parent, { ...changes.get(now.parent), add: now });
    const column = rule.column;
    const integer = parentTable.columns.get(column)?.type === "integer";
    for (const [parentId, change] of changes) {
      const parent = await this.#state.plan.current(parentTable, parentId);
      if (!parent) continue;
      const value = await adjustedAggregate(rule, parent[column] ?? null, change, integer, () =>
        this.#rescan(rule, parent),
      );
      await this.#setParentColumn(parentLogic, parent, column, value, tracked, rule);
    }
  }

  /** min/max when the current extreme left: the extreme over what every child of `parent` contributes now. */
  async #rescan(rule: AggregateRule, parent: RowDocument): Promise<unknown> {
    const rel = rule.rel;
    const childLogic = this.#state.logicOf(rel.childTable);
    const parentId = parent._id;
    const stored = await this.#state.plan.findStored(childLogic.table, childrenQuery(rel, parent));
    const items: Contribution[] = [];
    const visited = new Set<string>();
    for (const doc of stored) {
      const key = trackedRowKey(childLogic.name, doc._id);
      visited.add(key);
      const tracked = this.#state.trackedRows.get(key);
      const contribution = tracked ? this.#contribution(tracked, rule) : this.#contributionOf(rule, doc);
      if (contribution && contribution.parent === parentId) items.push(contribution);
    }
    for (const tracked of this.#state.trackedRows.values()) {
      if (tracked.logic !== childLogic || visited.has(tracked.key)) continue;
      const contribution = this.#contribution(tracked, rule);
      if (contribution && contribution.parent === parentId) items.push(contribution);
    }
    const unknown = items.filter((contribution) => contribution.qualified === undefined);
    const values = await this.#evalWhere(
      rule,
      unknown.map((contribution) => contribution.src),
    );
    unknown.forEach((contribution, i) => {
      contribution.qualified = values[i];
    });
    let extreme: unknown = null;
    for (const contribution of items) {
      if (!contribution.qualified || contribution.value === null || contribution.value === undefined)
        continue;
      if (extreme === null || better(rule.type, contribution.value, extreme)) extreme = contribution.value;
    }
    return extreme;
  }

  /** Sets an aggregate column of the parent (noting the rule on it), and queues the parent when it changed. */
  async #setParentColumn(
    parentLogic: TableLogic,
    parent: RowDocument,
    column: string,
    value: unknown,
    via: TrackedRow,
    rule: AggregateRule,
  ): Promise<void> {
    const resource = resourceVia(this.#state.request.version, via.resource, rule.rel, "parent");
    const parentTracked = this.#state.trackedRows.track(parentLogic, parent._id, resource, parent);
    this.#state.noteRule(parentTracked, rule);
    if (sameValue(parent[column] ?? null, value)) return;
    const next = { ...parent, [column]: value, _ck: newChecksum() } as RowDocument;
    this.#state.plan.update(parentTracked.resource, parent, next);
    this.#state.enqueue(parentTracked);
  }
}
