/**
 * The rule program of one project revision: one script for the sandbox that
 * holds every rule of the project as a function, plus a small dispatcher. A
 * request hands the dispatcher a batch of tasks (the per-row logic of many
 * rows, their validations and events, aggregate qualifications) and gets all
 * the answers back from one sandbox call.
 *
 * Rule code runs as ordinary (sloppy-mode) functions `(row, oldRow,
 * logicContext)`, each compiled on its own with `new Function`, so one rule's
 * text can never reach into another's. Rows come in and go out as plain JSON.
 */
import type { CompiledRule, LogicModel } from "../domain/model/rule-model.ts";
import { isolateFunction } from "../sandbox/isolate-script.ts";

/** The dispatcher (program-dispatcher.js, read once at start): `(RULES, TABLES, BODIES) => tesseraRules`. */
const DISPATCHER = isolateFunction(import.meta.dirname, "program-dispatcher.js");

export const ENTRY = "tesseraRules";

/** What the dispatcher needs to know about each rule (by index in the definition's `rules`). */
interface RuleInfo {
  type: string;
  table: string;
  col?: string;
  fn?: number;
  where?: number;
  deps?: string[];
  role?: string;
  from?: string;
}

interface TableInfo {
  columns: string[];
  formulas: number[];
  early: number[];
  validations: number[];
  events: number[];
  commitValidations: number[];
  commitEvents: number[];
}

export type RuleRow = Record<string, unknown>;

export interface PassTask {
  t: "pass";
  table: string;
  row: RuleRow;
  oldRow: RuleRow | null;
  verb: string;
  initialVerb: string;
  /** Columns (and `role.attr`) changed since the row's logic last ran; `null` = first run of an inserted row. */
  dirty: string[] | null;
  early: boolean;
  deleted: boolean;
  /** parentCopy rules to apply (at insert, or when their parent changed). */
  copies: number[];
  /** Aggregate rules (over this table) whose `where` to evaluate: on the new row, and on oldRow when `old`. */
  wheres: { rule: number; old: boolean }[];
}

export interface SettleTask {
  t: "settle";
  table: string;
  row: RuleRow;
  oldRow: RuleRow | null;
  verb: string;
  initialVerb: string;
  deleted: boolean;
  /** `row`: validations then events; `commit`: commit validations then commit events. */
  phase: "row" | "commit";
  /** Only the validations, or only the events (commit validations all run before any commit event). */
  part?: "validations" | "events";
  /**
   * Running again because code read a row that `logicContext.insert` returned:
   * the rows of the first inserts (as stored by the request), in call order.
   */
  given?: { table: string; row: RuleRow | null }[];
}

export interface WhereTask {
  t: "where";
  rule: number;
  rows: RuleRow[];
}

export type Task = PassTask | SettleTask | WhereTask;

export interface TaskError {
  rule: number;
  name: string;
  message: string;
}

/** A row rule code inserted with `logicContext.insert`. */
export interface RuleInsert {
  rule: number;
  table: string;
  values: unknown;
}

/** A task that failed: a rule threw (or broke a limit of the dispatcher); the call's later tasks did not run. */
export interface TaskFailure {
  error: TaskError;
}

export interface PassResult {
  error?: undefined;
  row: RuleRow;
  fired: number[];
  inserts: RuleInsert[];
  whereNew: Record<string, boolean>;
  whereOld: Record<string, boolean>;
}

interface SettleOutput {
  error?: undefined;
  fired: number[];
  inserts: RuleInsert[];
}

/** Every validation passed and every event ran. */
export interface SettleDone extends SettleOutput {
  incomplete?: undefined;
  failed?: undefined;
}

/**
 * Code read a row `logicContext.insert` returned before it was stored: the
 * run stopped there; `inserts` are to be planned and the task run again
 * with their rows `given`.
 */
export interface SettleIncomplete extends SettleOutput {
  incomplete: true;
  failed?: undefined;
}

/** A validation failed (its index); the call's later tasks did not run. */
export interface SettleFailed extends SettleOutput {
  incomplete?: undefined;
  failed: number;
}

export type SettleResult = SettleDone | SettleIncomplete | SettleFailed;

export interface WhereResult {
  error?: undefined;
  values: boolean[];
}

/** What a task of kind `T` answers when it succeeds. */
export type ResultOf<T extends Task> = T extends PassTask
  ? PassResult
  : T extends SettleTask
    ? SettleResult
    : WhereResult;

/** What the dispatcher answers a task of kind `T`: its result, or its failure (`error`). */
export type TaskResult<T extends Task = Task> = ResultOf<T> | TaskFailure;

/** What the dispatcher needs of a rule (types not named take none of the optional fields). */
function ruleInfo(rule: CompiledRule): RuleInfo {
  const info = { type: rule.type, table: rule.table };
  switch (rule.type) {
    case "sum":
    case "count":
    case "min":
    case "max":
      return { ...info, col: rule.column, where: rule.whereFn };
    case "formula":
      return { ...info, col: rule.column, fn: rule.fn, deps: [...rule.deps] };
    case "parentCopy":
      return { ...info, col: rule.column, role: rule.parentPath, from: rule.from };
    case "managedParent":
      return { ...info, role: rule.rel.role };
    default:
      return { ...info, fn: rule.fn };
  }
}

/** Builds the dispatcher's source (the rules and their dispatcher, without libraries). */
export function programSource(logic: LogicModel): string {
  const rules: Record<number, RuleInfo> = {};
  for (const r of logic.rules) {
    rules[r.index] = ruleInfo(r);
  }
  const tables: Record<string, TableInfo> = {};
  for (const t of logic.tables.values()) {
    tables[t.name] = {
      columns: t.table.columnOrder,
      formulas: t.formulas.map((r) => r.index),
      early: t.earlyEvents.map((r) => r.index),
      validations: t.validations.map((r) => r.index),
      events: t.events.map((r) => r.index),
      commitValidations: t.commitValidations.map((r) => r.index),
      commitEvents: t.commitEvents.map((r) => r.index),
    };
  }
  const bodies = logic.functions.map((f) => f.body);
  // One closure: only the entry point is global, so library code and rule code see none of the
  // dispatcher's names, and a library cannot replace the entry point (it is read-only).
  const args = [rules, tables, bodies].map((v) => JSON.stringify(v)).join(", ");
  return [
    "(function () {",
    `const tesseraRules = (${DISPATCHER})(${args});`,
    `Object.defineProperty(globalThis, ${JSON.stringify(ENTRY)}, { value: tesseraRules, writable: false, configurable: false });`,
    "})();",
  ].join("\n");
}
