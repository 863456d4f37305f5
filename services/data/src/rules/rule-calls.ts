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
import type { RuleRow, Task, TaskResult } from "./program.ts";
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

  rule(index: number): CompiledRule {
    return this.#compiled.byIndex.get(index)!;
  }

  ruleOrUndefined(index: number): CompiledRule | undefined {
    return this.#compiled.byIndex.get(index);
  }

  failure(rule: CompiledRule | undefined, message: string): ApiError {
    return ruleFailure(rule ? `Rule '${rule.name}' failed: ${message}` : `A rule failed: ${message}`);
  }

  /** One sandbox call; a rule error in the first `checked` answers fails the request. */
  async call(tasks: Task[], checked = tasks.length): Promise<TaskResult[]> {
    await attachParents(this.#plan, this.#needParents.splice(0));
    this.#stats.sandboxCalls++;
    const results = await this.#runtime.run(this.#compiled.program, tasks);
    for (const result of results.slice(0, checked)) {
      if (result?.error) throw this.taskError(result.error);
    }
    return results;
  }

  taskError(error: { rule: number; name: string; message: string }): ApiError {
    return this.failure(this.ruleOrUndefined(error.rule), `${error.name}: ${error.message}`);
  }
}
