/**
 * The rows one request's rules reach (rules/logic-run.ts): each tracked once,
 * with the state stored before the request, the state its logic last ran on,
 * its contributions to parent aggregates, and what was last validated.
 */
import type { ResourceModel } from "../domain/model/project-model.ts";
import type { TableLogic } from "../domain/model/rule-model.ts";
import type { Verb, WritePlan } from "../domain/write/write-plan.ts";
import type { RowDocument, RowId } from "../store/tenant-rows.ts";
import type { Contribution } from "./aggregate-values.ts";
import type { PassTask } from "./program.ts";

/** A row the rules of one request have reached, and what they know of it. */
export interface TrackedRow {
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
  appliedContributions: Map<number, Contribution | null>;
  /** `_ck` of the state last validated (null: settled as deleted). */
  settled: string | null | undefined;
  /** The state last validated: `oldRow` of the row's next events. */
  settledRow: RowDocument | null;
  /** Rows its events inserted in a run that stopped to read one of them (handed back when they run again). */
  given: TrackedRow[];
}

/** A tracked row ready for its pass in the next sandbox call: its current and base states, and its task. */
export interface PreparedPass {
  tracked: TrackedRow;
  current: RowDocument | null;
  base: RowDocument | null;
  task?: PassTask;
}

/** The key of a tracked row: its table and `_id`. */
export function trackedRowKey(table: string, id: RowId): string {
  return `${table}\u0000${JSON.stringify(id)}`;
}

/** The rows one request's run has reached, each tracked once. */
export class TrackedRows {
  readonly #plan: WritePlan;
  readonly #rows = new Map<string, TrackedRow>();

  constructor(plan: WritePlan) {
    this.#plan = plan;
  }

  /** The tracked row of `key` (trackedRowKey), if the run has reached it. */
  get(key: string): TrackedRow | undefined {
    return this.#rows.get(key);
  }

  /** Every row the run has reached so far. */
  values(): Iterable<TrackedRow> {
    return this.#rows.values();
  }

  /** The tracked row of `id`, tracked now (from its planned change, else `stored`) if it was not yet. */
  track(
    logic: TableLogic,
    id: RowId,
    resource: ResourceModel,
    stored: RowDocument | null,
    verb?: Verb,
  ): TrackedRow {
    const key = trackedRowKey(logic.name, id);
    let tracked = this.#rows.get(key);
    if (tracked) return tracked;
    const change = this.#plan.planned(logic.table, id);
    const before = change ? change.before : stored;
    tracked = {
      key,
      logic,
      id,
      resource: change?.resource ?? resource,
      before,
      seen: undefined,
      extra: new Set(),
      initialVerb: verb ?? change?.verb ?? (before ? "UPDATE" : "INSERT"),
      queued: false,
      appliedContributions: new Map(),
      settled: undefined,
      settledRow: before,
      given: [],
    };
    this.#rows.set(key, tracked);
    return tracked;
  }
}
