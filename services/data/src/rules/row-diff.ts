/** Comparing row states: what changed between two versions of a row, and whether two values are equal. */
import type { TableModel } from "../domain/model/project-model.ts";
import type { RowDocument } from "../store/tenant-rows.ts";

/** Equal column values: null and undefined alike, objects by their JSON. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (a === null || b === null) return a === b;
  if (typeof a !== "object" || typeof b !== "object") return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Columns whose values differ (all columns of the one that exists when the other is null). */
export function diffColumns(table: TableModel, a: RowDocument | null, b: RowDocument | null): Set<string> {
  const out = new Set<string>();
  if (!a && !b) return out;
  for (const c of table.columnOrder) {
    if (!a || !b || !sameValue(a[c], b[c])) out.add(c);
  }
  return out;
}
