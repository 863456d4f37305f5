/**
 * Where the rule program runs: the data service's isolated-vm sandbox
 * (services/data/src/sandbox). The engine only sees `RuleRuntime`, so unit
 * tests can run it against a stand-in.
 */
import { LRUCache } from "lru-cache";
import { ApiError, ErrorCode, errors } from "../../../../shared/errors.ts";
import {
  type ProgramSource,
  SandboxError,
  type SandboxPool,
  type SandboxProgram,
  SandboxTimeoutError,
} from "../sandbox/index.ts";
import { ENTRY, type Task, type TaskResult } from "./program.ts";

/**
 * The memory a runtime's rule programs may hold in this process (their sources, kept to load them
 * into a sandbox process again), bytes: the most recently used projects' within it.
 */
const RULE_PROGRAM_BYTES = 32 * 1024 * 1024;
/** A program's bytes beyond its sources' characters. */
const PROGRAM_BYTES = 1024;

export interface RuleProgram {
  /** Sandbox key: one program per project. */
  key: string;
  /** The project's account: whose share of the sandbox the rules take. */
  account: string;
  /** Changes with every revision of the project definition. */
  version: string;
  /** The dispatcher with the rules, then the project's libraries (rule-libraries.ts). */
  sources: ProgramSource[];
}

export interface RuleRuntime {
  /** Runs a batch of tasks in the program with one sandbox call. */
  run(program: RuleProgram, tasks: Task[]): Promise<TaskResult[]>;
}

/** A failure of the project's rule code (or of its limits): 500/5001 with a message naming the rule. */
export function ruleFailure(message: string): ApiError {
  return new ApiError(500, ErrorCode.internal, message);
}

/** The rule runtime on a sandbox pool (one sandbox call per `run`). */
export function sandboxRuntime(pool: SandboxPool, options: { timeoutMs?: number } = {}): RuleRuntime {
  // The most recently used projects' rule programs; one evicted is loaded again when next used.
  const programs = new LRUCache<string, { version: string; program: SandboxProgram; bytes: number }>({
    maxSize: RULE_PROGRAM_BYTES,
    sizeCalculation: (entry) => entry.bytes,
  });
  return {
    async run(p, tasks) {
      let entry = programs.get(p.key);
      if (!entry || entry.version !== p.version || entry.program.isRetired) {
        entry = {
          version: p.version,
          program: pool.program(p.key, p.sources, { account: p.account }),
          bytes: p.sources.reduce((sum, source) => sum + 2 * source.code.length, PROGRAM_BYTES),
        };
        programs.set(p.key, entry);
      }
      try {
        return (await entry.program.call(ENTRY, [{ tasks }], {
          timeoutMs: options.timeoutMs,
        })) as TaskResult[];
      } catch (err) {
        throw sandboxFailure(err, tasks);
      }
    },
  };
}

function tablesOf(tasks: Task[]): string {
  const names = [...new Set(tasks.map((t) => ("table" in t ? t.table : "")).filter(Boolean))];
  return names.length > 0 ? ` (rules of ${names.map((n) => `'${n}'`).join(", ")})` : "";
}

/** What a failed sandbox call means for the request. */
export function sandboxFailure(err: unknown, tasks: Task[]): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof SandboxTimeoutError) {
    return ruleFailure(
      `The rules of this request ran longer than the limit of ${err.timeoutMs} ms${tablesOf(tasks)}`,
    );
  }
  if (err instanceof SandboxError) {
    switch (err.kind) {
      case "memory":
        return ruleFailure(
          `The rules of this request used more memory than the sandbox allows${tablesOf(tasks)}`,
        );
      case "load":
        return ruleFailure(`The project's rules could not be loaded: ${err.message}`);
      case "result":
        return ruleFailure(`A rule produced a value that is not plain data: ${err.message}`);
      case "argument":
        return ruleFailure(`The rows of this request could not be passed to the rules: ${err.message}`);
      case "timeout":
        return ruleFailure(`The rules of this request ran longer than the time limit${tablesOf(tasks)}`);
      case "script":
        return ruleFailure(`A rule failed: ${err.message}`);
      default:
        return errors.unavailable("The rule sandbox", err);
    }
  }
  return errors.unavailable("The rule sandbox", err);
}
