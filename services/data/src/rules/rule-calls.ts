/**
 * The sandbox calls of one request's run of the rules (logic-run.ts): the
 * rows sent to rule code, with the parents they read attached just before
 * each call for all of the call's rows at once (parent-rows.ts), and the
 * errors that fail the request when a rule fails.
 */
import type { ApiError } from "../../../../shared/errors.ts";
import type { CompiledRule, TableLogic } from "../domain/model/rule-model.ts";
import type { WritePlan } from "../domain/write/write-plan.ts";
import type { RowDocument } from "../store/tenant-rows.ts";
import { attachParents, type ParentTarget, toRuleRow } from "./parent-rows.ts";
import type {
  PassResult,
  PassTask,
  RuleRow,
  SettleResult,
  SettleTask,
  Task,
  TaskError,
  TaskFailure,
  TaskResult,
  WhereResult,
  WhereTask,
} from "./program.ts";
import type { CompiledLogic, LogicStats } from "./run-state.ts";
import { type RuleRuntime, ruleFailure } from "./runtime.ts";

export class RuleCalls {
  readonly #runtime: RuleRuntime;
  readonly #compiled: CompiledLogic;
  readonly #plan: WritePlan;
  readonly #stats: LogicStats;
  /** Rule rows built for the next sandbox call that still need their parents. */
  readonly #needParents: ParentTarget[] = [];

  constructor(runtime: RuleRuntime, compiled: CompiledLogic, plan: WritePlan, stats: LogicStats) {
    this.#runtime = runtime;
    this.#compiled = compiled;
    this.#plan = plan;
    this.#stats = stats;
  }

  /**
   * The row for rule code; the parents it reads (`row.<role>`, `row.<role>.<role>`…)
   * are put in just before the sandbox call, for all of the call's rows at once.
   */
  ruleRow(logic: TableLogic, doc: RowDocument, roles: Set<string>): RuleRow {
    const row = toRuleRow(logic.table, doc);
    if (roles.size > 0) this.#needParents.push({ table: logic.table, doc, roles, row });
    return row;
  }

  /** The rule of `index`, which the dispatcher names only for a rule of the program. */
  rule(index: number): CompiledRule {
    const rule = this.#compiled.byIndex.get(index);
    if (!rule) throw new Error(`The rule program named rule ${index}, which it does not have`);
    return rule;
  }

  ruleOrUndefined(index: number): CompiledRule | undefined {
    return this.#compiled.byIndex.get(index);
  }

  failure(rule: CompiledRule | undefined, message: string): ApiError {
    return ruleFailure(rule ? `Rule '${rule.name}' failed: ${message}` : `A rule failed: ${message}`);
  }

  /** One sandbox call for a wave: the rows' passes, then `where` qualifications; a rule error fails the request. */
  async wave(
    passes: PassTask[],
    wheres: WhereTask[],
  ): Promise<{ passes: PassResult[]; wheres: WhereResult[] }> {
    const results = this.#succeeded(await this.#call([...passes, ...wheres]));
    // The dispatcher answers each task in order, with a result of the task's kind.
    return {
      passes: results.slice(0, passes.length) as PassResult[],
      wheres: results.slice(passes.length) as WhereResult[],
    };
  }

  /**
   * One sandbox call for the settle tasks of rows (`row`) and of the commit (`commit`): a rule
   * error in a row's answer fails the request; the commit's answers are the caller's to check.
   * The answers stop after the first failure (an error or a validation that failed).
   */
  async settle(
    row: SettleTask[],
    commit: SettleTask[],
  ): Promise<{ row: SettleResult[]; commit: TaskResult<SettleTask>[] }> {
    const results = (await this.#call([...row, ...commit])) as TaskResult<SettleTask>[];
    return { row: this.#succeeded(results.slice(0, row.length)), commit: results.slice(row.length) };
  }

  async #call(tasks: Task[]): Promise<TaskResult[]> {
    await attachParents(this.#plan, this.#needParents.splice(0));
    this.#stats.sandboxCalls++;
    return this.#runtime.run(this.#compiled.program, tasks);
  }

  /** The results, when none is a failure; the first failure fails the request. */
  #succeeded<R extends object>(results: (R | TaskFailure)[]): R[] {
    return results.map((result) => {
      if (isFailure(result)) throw this.taskError(result.error);
      return result;
    });
  }

  taskError(error: TaskError): ApiError {
    return this.failure(this.ruleOrUndefined(error.rule), `${error.name}: ${error.message}`);
  }
}

/** Whether a task failed (its answer holds an `error`). */
function isFailure<R extends object>(result: R | TaskFailure): result is TaskFailure {
  return "error" in result && result.error !== undefined;
}
