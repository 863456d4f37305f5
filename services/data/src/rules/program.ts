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
import type { LogicModel } from "../domain/rule-model.ts";

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

export interface PassResult {
  row: RuleRow;
  fired: number[];
  inserts: { rule: number; table: string; values: unknown }[];
  whereNew: Record<string, boolean>;
  whereOld: Record<string, boolean>;
  error?: TaskError;
}

export interface SettleResult {
  fired: number[];
  inserts: { rule: number; table: string; values: unknown }[];
  /**
   * Code read a row `logicContext.insert` returned before it was stored: the
   * run stopped there; `inserts` are to be planned and the task run again
   * with their rows `given`.
   */
  incomplete?: boolean;
  /** The validation that failed. */
  failed?: number;
  error?: TaskError;
}

export interface WhereResult {
  values: boolean[];
  error?: TaskError;
}

export type TaskResult = PassResult & SettleResult & WhereResult;

/** Builds the dispatcher's source (the rules and their dispatcher, without libraries). */
export function programSource(logic: LogicModel): string {
  const rules: Record<number, RuleInfo> = {};
  for (const r of logic.rules) {
    rules[r.index] = {
      type: r.type,
      table: r.table,
      col: r.column,
      fn: r.fn,
      where: r.whereFn,
      deps: r.type === "formula" ? [...r.deps] : undefined,
      role: r.type === "parentCopy" ? r.parentPath : r.type === "managedParent" ? r.rel?.role : undefined,
      from: r.from,
    };
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
  return [
    "(function () {",
    header(rules, tables, bodies),
    DISPATCHER,
    `Object.defineProperty(globalThis, ${JSON.stringify(ENTRY)}, { value: tesseraRules, writable: false, configurable: false });`,
    "})();",
  ].join("\n");
}

function header(
  rules: Record<number, RuleInfo>,
  tables: Record<string, TableInfo>,
  bodies: string[],
): string {
  return [
    `const RULES = ${JSON.stringify(rules)};`,
    `const TABLES = ${JSON.stringify(tables)};`,
    `const BODIES = ${JSON.stringify(bodies)};`,
  ].join("\n");
}

/** The dispatcher; runs inside the isolate. Kept free of anything rule code could tamper with mid-call. */
const DISPATCHER = `
const FNS = BODIES.map((body) => new Function("row", "oldRow", "logicContext", body));
const JSONstringify = JSON.stringify;
const isFiniteNumber = Number.isFinite;
const freeze = Object.freeze;

const ProxyCtor = Proxy;

class RuleFailure extends Error {}
class RowNotStoredYet extends Error {}

function same(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  return JSONstringify(a) === JSONstringify(b);
}

function deepFreeze(v) {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    freeze(v);
    for (const k of Object.keys(v)) deepFreeze(v[k]);
  }
  return v;
}

function columnsOf(table, row) {
  const out = {};
  for (const c of TABLES[table].columns) out[c] = row[c] === undefined ? null : row[c];
  return out;
}

function snapshot(table, row) {
  return JSONstringify(columnsOf(table, row));
}

function plain(v) {
  if (v === undefined) return null;
  if (typeof v === "number" && !isFiniteNumber(v)) throw new RuleFailure("returned " + String(v) + ", not a finite number");
  if (v instanceof Date) return v.toISOString();
  if (v !== null && typeof v === "object") return JSON.parse(JSONstringify(v));
  if (typeof v === "function" || typeof v === "symbol" || typeof v === "bigint") throw new RuleFailure("returned a " + typeof v);
  return v;
}

function newIo() {
  return { inserts: [], fired: [], calls: 0, stopped: false };
}

/**
 * What logicContext.insert returns before the row is stored: reading it stops
 * the run (the host stores the row and runs the task again, when the row is
 * handed back by position), or fails where rows cannot be handed back.
 */
function rowNotStoredYet(io, canRead) {
  const stop = () => {
    if (!canRead)
      throw new RuleFailure("the row logicContext.insert returns can be read in events only (early events and formulas run before it is stored)");
    io.stopped = true;
    throw new RowNotStoredYet("the inserted row is not stored yet");
  };
  return new ProxyCtor({}, {
    get: stop, set: stop, has: stop, ownKeys: stop, getOwnPropertyDescriptor: stop,
    defineProperty: stop, deleteProperty: stop, getPrototypeOf: stop,
  });
}

function makeContext(task, io, canInsert, canRead) {
  return freeze({
    verb: task.verb,
    initialVerb: task.initialVerb,
    insert(table, values) {
      if (!canInsert) throw new RuleFailure("logicContext.insert is not available here (commit events cannot change rows)");
      if (typeof table !== "string") throw new RuleFailure("logicContext.insert needs a table name");
      if (values === null || typeof values !== "object" || Array.isArray(values))
        throw new RuleFailure("logicContext.insert needs an object of column values");
      const n = io.calls++;
      const given = task.given;
      if (given !== undefined && n < given.length) {
        if (given[n].table !== table)
          throw new RuleFailure("logicContext.insert was called for '" + table + "' where the previous run inserted into '" + given[n].table + "' (the code must insert in the same order when it runs again)");
        return given[n].row === null ? null : JSON.parse(JSONstringify(given[n].row));
      }
      io.inserts.push({ rule: current, table, values: JSON.parse(JSONstringify(values)) });
      return rowNotStoredYet(io, canRead);
    },
  });
}

let current = -1;

function call(rule, fn, row, oldRow, ctx) {
  current = rule;
  const v = FNS[fn](row, oldRow, ctx);
  if (v !== null && typeof v === "object" && typeof v.then === "function")
    throw new RuleFailure("returned a promise; rules run synchronously");
  return v;
}

function runPass(task, io) {
  const info = TABLES[task.table];
  const { inserts, fired } = io;
  const ctx = makeContext(task, io, true, false);
  const row = task.row;
  const oldRow = task.oldRow === null ? null : freeze(task.oldRow);
  for (const k of Object.keys(row)) {
    if (!info.columns.includes(k) && row[k] !== null && typeof row[k] === "object") deepFreeze(row[k]);
  }
  const all = task.dirty === null;
  const dirty = new Set(all ? [] : task.dirty);
  if (task.early) {
    const before = columnsOf(task.table, row);
    for (const r of info.early) {
      call(r, RULES[r].fn, row, oldRow, ctx);
      fired.push(r);
    }
    if (task.deleted) Object.assign(row, before);
    for (const c of info.columns) if (!same(row[c], before[c])) { row[c] = plain(row[c]); dirty.add(c); }
  }
  if (!task.deleted) {
    for (const r of task.copies) {
      const rule = RULES[r];
      let parent = row;
      for (const role of rule.role.split(".")) parent = parent === null || parent === undefined ? null : parent[role];
      const v = parent === null || parent === undefined ? null : parent[rule.from];
      row[rule.col] = v === undefined ? null : v;
      dirty.add(rule.col);
      fired.push(r);
    }
    for (const r of info.formulas) {
      const rule = RULES[r];
      if (!all && !rule.deps.some((d) => dirty.has(d))) continue;
      current = r;
      const v = plain(call(r, rule.fn, row, oldRow, ctx));
      if (!same(v, row[rule.col] === undefined ? null : row[rule.col])) dirty.add(rule.col);
      row[rule.col] = v;
      fired.push(r);
    }
  }
  const whereNew = {};
  const whereOld = {};
  for (const w of task.wheres) {
    const rule = RULES[w.rule];
    if (!task.deleted) whereNew[w.rule] = Boolean(call(w.rule, rule.where, freeze(columnsOf(task.table, row)), null, ctx));
    if (w.old && oldRow !== null) whereOld[w.rule] = Boolean(call(w.rule, rule.where, oldRow, null, ctx));
  }
  return { row: columnsOf(task.table, row), fired, inserts, whereNew, whereOld };
}

function runSettle(task, io) {
  const info = TABLES[task.table];
  const { inserts, fired } = io;
  const commit = task.phase === "commit";
  const ctx = makeContext(task, io, !commit, !commit);
  const row = task.row;
  for (const k of Object.keys(row)) {
    if (!info.columns.includes(k) && row[k] !== null && typeof row[k] === "object") deepFreeze(row[k]);
  }
  const oldRow = task.oldRow === null ? null : freeze(task.oldRow);
  const before = snapshot(task.table, row);
  const unchanged = (r) => {
    if (snapshot(task.table, row) !== before)
      throw new RuleFailure("changed its row; only early events and formulas may change a row (" + RULES[r].type + " runs after the row's logic)");
  };
  if (!task.deleted && task.part !== "events") {
    for (const r of commit ? info.commitValidations : info.validations) {
      const ok = call(r, RULES[r].fn, row, oldRow, ctx);
      unchanged(r);
      fired.push(r);
      if (!ok) return { fired, inserts, failed: r };
    }
  }
  for (const r of task.part === "validations" ? [] : commit ? info.commitEvents : info.events) {
    call(r, RULES[r].fn, row, oldRow, ctx);
    unchanged(r);
    fired.push(r);
  }
  return { fired, inserts };
}

function runWhere(task) {
  const rule = RULES[task.rule];
  const ctx = makeContext({ verb: "UPDATE", initialVerb: "UPDATE" }, newIo(), false, false);
  return { values: task.rows.map((row) => Boolean(call(task.rule, rule.where, freeze(row), null, ctx))) };
}

function describe(e) {
  if (e instanceof Error) return { name: e instanceof RuleFailure ? "RuleError" : String(e.name), message: String(e.message) };
  if (e !== null && typeof e === "object" && typeof e.message === "string") return { name: "Error", message: e.message };
  return { name: "Error", message: String(e) };
}

function tesseraRules(input) {
  const results = [];
  for (const task of input.tasks) {
    const io = newIo();
    let result;
    try {
      result = task.t === "pass" ? runPass(task, io) : task.t === "settle" ? runSettle(task, io) : runWhere(task);
    } catch (e) {
      result = io.stopped ? undefined : { error: { rule: current, ...describe(e) } };
    }
    // Stopped by reading a row not stored yet (even if the code caught that): run again once it is.
    if (io.stopped) result = { fired: io.fired, inserts: io.inserts, incomplete: true };
    results.push(result);
    if (result.error || result.failed !== undefined) break;
  }
  return results;
}
`;
