/**
 * The reactive logic engine of a data-service process (docs/rules.md): the
 * rules of each project model compiled once into a sandbox program, and their
 * run over one request's plan (logic-run.ts).
 */
import { type ProjectModel, programKey } from "../domain/model/project-model.ts";
import type { WritePlan } from "../domain/write/write-plan.ts";
import { LogicRun } from "./logic-run.ts";
import { programSource } from "./program.ts";
import { ruleProgramSources } from "./rule-libraries.ts";
import type { CompiledLogic, LogicLimits, LogicRequest, LogicStats } from "./run-state.ts";
import type { RuleRuntime } from "./runtime.ts";

export type { LogicLimits, LogicRequest, LogicStats } from "./run-state.ts";

export const DEFAULT_LIMITS: LogicLimits = { maxWaves: 500, maxRowPasses: 100_000, maxSettleRounds: 50 };

export class LogicEngine {
  readonly runtime: RuleRuntime;
  readonly limits: LogicLimits;
  readonly #compiled = new WeakMap<ProjectModel, CompiledLogic>();

  constructor(runtime: RuleRuntime, limits: Partial<LogicLimits> = {}) {
    this.runtime = runtime;
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  compiled(model: ProjectModel): CompiledLogic {
    let c = this.#compiled.get(model);
    if (!c) {
      // The rules were compiled and checked with the model (rule-model.ts); a model with problems is never built.
      const logic = model.logic;
      const key = programKey(model, "rules");
      c = {
        logic,
        program: {
          key,
          account: model.account,
          version: `${model.uid}:${model.revision}`,
          sources: ruleProgramSources(key, programSource(logic), model.definition.libraries),
        },
        byIndex: new Map(logic.rules.map((r) => [r.index, r])),
      };
      this.#compiled.set(model, c);
    }
    return c;
  }

  /** Runs the project's rules over the plan; throws (and the request fails) when a rule rejects it. */
  async apply(plan: WritePlan, request: LogicRequest): Promise<LogicStats> {
    const compiled = this.compiled(plan.project);
    const stats: LogicStats = { sandboxCalls: 0, rowPasses: 0, waves: 0 };
    if (!compiled.logic.hasRules) return stats;
    await new LogicRun(this, compiled, plan, request, stats).run();
    return stats;
  }
}
