/**
 * What one request's run of the rules (logic-run.ts) is given, and the state
 * it shares with the parts that do one job of it (aggregate-maintenance.ts,
 * rule-inserts.ts, settle-stage.ts): the rows it tracks, its queue, and where a
 * row it reached through a relationship is reported.
 */

import type { Relationship, ResourceModel, VersionModel } from "../domain/model/project-model.ts";
import type { CompiledRule, LogicModel, TableLogic } from "../domain/model/rule-model.ts";
import type { Principal } from "../domain/read/authorization.ts";
import type { WritePlan } from "../domain/write/write-plan.ts";
import type { RowId } from "../store/tenant-rows.ts";
import type { RuleProgram } from "./runtime.ts";
import type { TrackedRow, TrackedRows } from "./tracked-rows.ts";

export interface LogicLimits {
  /** Propagation waves per round (each is one sandbox call). */
  maxWaves: number;
  /** Row passes per request (a row processed again counts again). */
  maxRowPasses: number;
  /** Rounds of events inserting rows that insert rows… */
  maxSettleRounds: number;
}

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

/** A project model's rules, ready to run: the logic, its sandbox program and the rules by index. */
export interface CompiledLogic {
  logic: LogicModel;
  program: RuleProgram;
  byIndex: Map<number, CompiledRule>;
}

/** The state of one request's run that its parts share (LogicRun holds it). */
export interface RunState {
  /** The logic of each table, by table name. */
  readonly tables: ReadonlyMap<string, TableLogic>;
  /** The logic of a table of the project (every table has one). */
  logicOf(table: string): TableLogic;
  readonly plan: WritePlan;
  readonly request: LogicRequest;
  readonly limits: LogicLimits;
  /** The rows the run has reached. */
  readonly trackedRows: TrackedRows;
  /** Queues the row for a pass in the next wave (once). */
  enqueue(row: TrackedRow): void;
  /** Records in the transaction summary that `rule` acted on the row. */
  noteRule(row: { logic: TableLogic; id: RowId }, rule: CompiledRule): void;
}

/**
 * The resource a row reached from `from` through `rel` is reported under: the container or
 * sub-resource it was reached through, else the table's own (docs/rules.md, "What shows in the
 * transaction summary").
 */
export function resourceVia(
  version: VersionModel,
  from: ResourceModel,
  rel: Relationship,
  to: "parent" | "child",
): ResourceModel {
  const target = to === "parent" ? rel.parentTable : rel.childTable;
  if (from.via?.relationship === rel && from.via.kind === (to === "parent" ? "children" : "parent")) {
    const container = version.resources.get(from.name.slice(0, from.name.lastIndexOf(".")));
    if (container && container.table.name === target) return container;
  }
  const subresource = from.subresources.find(
    (s) => s.via?.relationship === rel && s.via.kind === (to === "parent" ? "parent" : "children"),
  );
  return subresource ?? tableResource(version, target);
}

/** The resource named after a table (every table is one in every version). */
export function tableResource(version: VersionModel, table: string): ResourceModel {
  const resource = version.resources.get(table);
  if (!resource) throw new Error(`The API version has no resource for table '${table}'`);
  return resource;
}
