/**
 * Reactive logic (docs/rules.md): the rules of a project definition, run on every
 * write's plan before it is committed. The data service wires `planExtension`
 * into the writer. Definitions whose rules do not parse, read unknown
 * attributes or form a cycle are rejected when the model is compiled
 * (domain/model/rule-model.ts), before the engine sees them.
 */
import type { PlanExtension } from "../domain/write/writer.ts";
import type { SandboxPool } from "../sandbox/index.ts";
import { LogicEngine, type LogicLimits } from "./engine.ts";
import { type RuleRuntime, sandboxRuntime } from "./runtime.ts";

export { LogicEngine, type LogicLimits, type LogicStats } from "./engine.ts";
export { type RuleRuntime, sandboxRuntime } from "./runtime.ts";

export interface Logic {
  engine: LogicEngine;
  planExtension: PlanExtension;
}

export function createLogic(
  options: { pool: SandboxPool; timeoutMs?: number } | { runtime: RuleRuntime },
  limits: Partial<LogicLimits> = {},
): Logic {
  const runtime = "runtime" in options ? options.runtime : sandboxRuntime(options.pool, options);
  const engine = new LogicEngine(runtime, limits);
  return {
    engine,
    planExtension: async (plan, principal, context) => {
      await engine.apply(plan, { principal, resource: context.resource, version: context.version });
    },
  };
}
