/**
 * The columns of a new row, the same for an object a client inserts
 * (writer.ts) and a row a rule inserts (rules/rule-inserts.ts): the given values,
 * each missing column's default, the generated key when none is given, then
 * the check that required and key columns have a value.
 */
import { errors } from "../../../../../shared/errors.ts";
import { segmentProblem } from "../../../../../shared/names.ts";
import { coerceValue } from "../model/column-values.ts";
import type { TableModel } from "../model/project-model.ts";

export interface NewRowOptions {
  /** The table's next generated key (asked for only when the row has none). */
  nextSequence: () => Promise<number>;
  /** Values set after defaults and the generated key, before the check (a rule's aggregates start empty). */
  initial?: Record<string, unknown>;
  /** The error for a required or key column without a value. */
  missing: (column: string) => Error;
}

/** `values`: coerced values of the table's columns. */
export async function newRowValues(
  table: TableModel,
  values: Record<string, unknown>,
  options: NewRowOptions,
): Promise<Record<string, unknown>> {
  const row: Record<string, unknown> = {};
  for (const column of table.columns.values()) {
    if (values[column.name] !== undefined) row[column.name] = values[column.name];
    else if (column.default !== undefined)
      row[column.name] = coerceValue(column, column.default, column.name);
  }
  const gen = table.generatedColumn;
  if (gen && (row[gen] === undefined || row[gen] === null)) row[gen] = await options.nextSequence();
  Object.assign(row, options.initial);
  for (const column of table.columns.values()) {
    const missing = row[column.name] === undefined || row[column.name] === null;
    if (missing && (column.required || table.key.includes(column.name))) throw options.missing(column.name);
  }
  for (const column of table.key) {
    // A key value is a segment of the row's href (docs/names.md).
    const problem = typeof row[column] === "string" ? segmentProblem(row[column]) : undefined;
    if (problem) throw errors.badAttribute(`Key attribute '${column}' ${problem}`);
  }
  return row;
}
