/**
 * Values of sum, count, min and max rules, kept by adjustment (docs/rules.md):
 * what a child contributes to its parent's aggregate, and the arithmetic of
 * adding and comparing contributions (rules/aggregate-maintenance.ts applies them).
 */
import type { TableModel } from "../domain/model/project-model.ts";
import type { AggregateRule, TableLogic } from "../domain/model/rule-model.ts";
import { parentIdOf } from "../domain/write/write-plan.ts";
import type { RowDocument, RowId } from "../store/tenant-rows.ts";

/** What a child row contributes to one aggregate of its parent, as the parent currently reflects it. */
export interface Contribution {
  parent: RowId | null;
  /** The aggregate's `where`; undefined = not evaluated yet. */
  qualified: boolean | undefined;
  value: unknown;
  /** The row state this was taken from. */
  src: RowDocument;
}

/** Sums in doubles drift (0.1 + 0.2); 15 significant digits is what a double holds exactly. */
export function normalize(n: number): number {
  return Number.isInteger(n) ? n : Number(n.toPrecision(15));
}

/** A value as a summand: numbers as they are, anything else (null, missing) as 0. */
export function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Whether `a` beats the current extreme `b` of a min or max rule. */
export function better(type: string, a: unknown, b: unknown): boolean {
  return type === "min" ? (a as number) < (b as number) : (a as number) > (b as number);
}

/** An aggregate over no children: 0 for sum and count, null for min and max. */
export function initialAggregate(rule: AggregateRule): unknown {
  return rule.type === "sum" || rule.type === "count" ? 0 : null;
}

/** The aggregate columns of a new row of the table: each over no children yet. */
export function initialAggregates(logic: TableLogic): Record<string, unknown> {
  return Object.fromEntries(logic.aggregates.map((rule) => [rule.column, initialAggregate(rule)]));
}

/** What `doc` contributes to `rule`'s parent; its `where` is left to evaluate when the rule has one. */
export function contributionOf(rule: AggregateRule, parentTable: TableModel, doc: RowDocument): Contribution {
  return {
    parent: parentIdOf(parentTable, rule.rel, doc),
    qualified: rule.whereFn === undefined ? true : undefined,
    value: rule.of ? (doc[rule.of] ?? null) : null,
    src: doc,
  };
}

/**
 * The parent's new aggregate value when one child's contribution is removed and/or added:
 * sum and count by difference; min and max take a better value directly and `rescan` the
 * parent's children only when the current extreme leaves.
 */
export async function adjustedAggregate(
  rule: AggregateRule,
  current: unknown,
  op: { remove?: Contribution; add?: Contribution },
  integer: boolean,
  rescan: () => Promise<unknown>,
): Promise<unknown> {
  if (rule.type === "sum") {
    const total = num(current) - num(op.remove?.value) + num(op.add?.value);
    return integer ? total : normalize(total);
  }
  if (rule.type === "count") return num(current) - (op.remove ? 1 : 0) + (op.add ? 1 : 0);
  const removed = op.remove?.value ?? null;
  const added = op.add?.value ?? null;
  const leaves = removed !== null && (current === null || !better(rule.type, current, removed));
  // The extreme moved further out (or stayed): it is still the extreme, no rescan.
  if (leaves && current !== null && added !== null && !better(rule.type, removed, added)) return added;
  if (leaves) return rescan();
  if (added !== null && (current === null || better(rule.type, added, current))) return added;
  return current;
}
