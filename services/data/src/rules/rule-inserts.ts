/**
 * Rows the rules of one request create (logic-run.ts; docs/rules.md): rows
 * rule code inserts with `logicContext.insert`, and the parent a managedParent
 * rule creates when a child points to one that does not exist. Each new row
 * gets its defaults, generated key and checks, starts with empty aggregates,
 * is planned as an insert and queued for its first pass.
 */
import type { ApiError } from "../../../../shared/errors.ts";
import { coerceValue, rowId } from "../domain/model/column-values.ts";
import type { ManagedParentRule, TableLogic } from "../domain/model/rule-model.ts";
import { foreignKey } from "../domain/model/table-model.ts";
import { newRowValues } from "../domain/write/new-row.ts";
import { newChecksum, parentIdOf } from "../domain/write/write-plan.ts";
import type { RowDocument } from "../store/tenant-rows.ts";
import { initialAggregates } from "./aggregate-values.ts";
import type { RuleCalls } from "./rule-calls.ts";
import { type RunState, resourceVia, tableResource } from "./run-state.ts";
import type { TrackedRow } from "./tracked-rows.ts";

export class RuleInserts {
  readonly #state: RunState;
  readonly #calls: RuleCalls;

  constructor(state: RunState, calls: RuleCalls) {
    this.#state = state;
    this.#calls = calls;
  }

  /** A row rule code inserted (`logicContext.insert`): planned, tracked and queued. */
  async insertFromRule(ruleIndex: number, tableName: string, values: unknown): Promise<TrackedRow> {
    const rule = this.#calls.ruleOrUndefined(ruleIndex);
    const logic = this.#state.tables.get(tableName);
    if (!logic) throw this.#calls.failure(rule, `logicContext.insert: there is no table '${tableName}'`);
    const doc = await this.#newRow(logic, values, (message) =>
      this.#calls.failure(rule, `logicContext.insert('${tableName}'): ${message}`),
    );
    const resource = tableResource(this.#state.request.version, tableName);
    this.#state.plan.insert(resource, doc);
    const tracked = this.#state.trackedRows.track(logic, doc._id, resource, null, "INSERT");
    this.#state.enqueue(tracked);
    return tracked;
  }

  /** managedParent: a child points to a parent that does not exist, so the parent is created. */
  async ensureParent(tracked: TrackedRow, row: RowDocument, rule: ManagedParentRule): Promise<void> {
    const { rel } = rule;
    const parentLogic = this.#state.logicOf(rel.parentTable);
    const parentId = parentIdOf(parentLogic.table, rel, row);
    if (parentId === null || (await this.#state.plan.current(parentLogic.table, parentId))) return;
    const values = Object.fromEntries(foreignKey(rel).map(({ child, parent }) => [parent, row[child]]));
    const doc = await this.#newRow(parentLogic, values, (message) =>
      this.#calls.failure(rule, `the '${rel.role}' parent could not be created: ${message}`),
    );
    const resource = resourceVia(this.#state.request.version, tracked.resource, rel, "parent");
    this.#state.plan.insert(resource, doc);
    const parentTracked = this.#state.trackedRows.track(parentLogic, doc._id, resource, null, "INSERT");
    this.#state.noteRule(parentTracked, rule);
    this.#state.enqueue(parentTracked);
  }

  /** A new row for `logic.table` from column values: defaults, generated key, checks; aggregates start empty. */
  async #newRow(
    logic: TableLogic,
    values: unknown,
    fail: (message: string) => ApiError,
  ): Promise<RowDocument> {
    const table = logic.table;
    const plan = this.#state.plan;
    if (values === null || typeof values !== "object" || Array.isArray(values)) {
      throw fail("the values must be an object");
    }
    const given: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
      const column = table.columns.get(name);
      if (!column) throw fail(`'${name}' is not an attribute of '${table.name}'`);
      try {
        given[name] = coerceValue(column, value, name);
      } catch (err) {
        throw fail(err instanceof Error ? err.message : String(err));
      }
    }
    const row = await newRowValues(table, given, {
      nextSequence: () => plan.nextSequence(table),
      initial: initialAggregates(logic),
      missing: (column) => fail(`attribute '${column}' of '${table.name}' is required`),
    });
    for (const [role, rel] of table.parents) {
      if (logic.managedParents.has(role)) continue;
      const parentTable = this.#state.logicOf(rel.parentTable).table;
      const parentId = parentIdOf(parentTable, rel, row);
      if (parentId !== null && !(await plan.current(parentTable, parentId))) {
        throw fail(`no '${rel.parentTable}' with key ${String(parentId)} exists for '${role}'`);
      }
    }
    const id = rowId(table, row);
    if (await plan.current(table, id))
      throw fail(`an object with key ${String(id)} already exists in '${table.name}'`);
    return { ...row, _id: id, _ck: newChecksum() } as RowDocument;
  }
}
