/**
 * A committed write in a few words, for the audit trail of administrators' data
 * writes: per table, how many rows were inserted, updated and deleted
 * (`customer: 1 inserted; orders: 2 updated`). Counts only: never a value.
 */
import type { RowChange, Verb } from "./write-plan.ts";

const WORDS: Record<Verb, string> = { INSERT: "inserted", UPDATE: "updated", DELETE: "deleted" };

export function changeSummary(changes: readonly RowChange[]): string {
  const byTable = new Map<string, Map<string, number>>();
  for (const change of changes) {
    const counts = byTable.get(change.table.name) ?? new Map<string, number>();
    const word = WORDS[change.verb];
    counts.set(word, (counts.get(word) ?? 0) + 1);
    byTable.set(change.table.name, counts);
  }
  if (byTable.size === 0) return "no rows changed";
  return [...byTable]
    .map(([table, counts]) => `${table}: ${[...counts].map(([word, n]) => `${n} ${word}`).join(", ")}`)
    .join("; ");
}
