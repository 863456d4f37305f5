/**
 * What both pools share: programs whose calls and evaluations become encoded
 * requests, and the current program of each key (registration, replacement,
 * look-up, drop).
 */
import { SandboxError } from "./errors.ts";
import {
  callRequest,
  evaluateRequest,
  type HostFunctionTable,
  normaliseHostFunctions,
  normaliseSources,
  programHash,
  type Request,
} from "./requests.ts";
import type {
  CallOptions,
  EvaluateOptions,
  HostFunction,
  HostFunctions,
  ProgramOptions,
  ProgramSource,
  SandboxProgram,
} from "./types.ts";

/** A registration, checked: what a pool makes a program of. */
export interface ProgramSpec {
  key: string;
  sources: ProgramSource[];
  hostFns: HostFunctionTable;
  /** Of the code and the host-function names: the same hash is the same program. */
  hash: string;
}

/**
 * What every program has: its key, code and host functions, whether it is
 * retired; `call` and `evaluate` are checked and encoded here and run by the
 * pool's own `execute`.
 */
export abstract class ProgramBase implements SandboxProgram {
  readonly key: string;
  readonly hash: string;
  readonly sources: ProgramSource[];
  protected hostFns: HostFunctionTable;
  protected retired = false;

  constructor(spec: ProgramSpec) {
    this.key = spec.key;
    this.sources = spec.sources;
    this.hostFns = spec.hostFns;
    this.hash = spec.hash;
  }

  /** Largest arguments / bindings (JSON bytes). */
  protected abstract get maxArgumentBytes(): number;
  protected abstract execute(request: Request, options: CallOptions): Promise<unknown>;
  abstract warm(timeoutMs?: number): Promise<void>;

  async call(name: string, args: unknown[] = [], options: CallOptions = {}): Promise<unknown> {
    return this.execute(callRequest(name, args, this.maxArgumentBytes, this.key), options);
  }

  async evaluate(
    code: string,
    bindings: Record<string, unknown> = {},
    options: EvaluateOptions = {},
  ): Promise<unknown> {
    return this.execute(evaluateRequest(code, bindings, options, this.maxArgumentBytes, this.key), options);
  }

  get isRetired(): boolean {
    return this.retired;
  }

  lookupHostFunction(path: string): { fn: HostFunction; sync: boolean } | undefined {
    return this.hostFns.get(path);
  }

  /** Same code, newer host-function implementations (e.g. a changed allow-list). */
  replaceHostFunctions(hostFns: HostFunctionTable): void {
    this.hostFns = hostFns;
  }

  /** Another registration of the key (new code) or `drop` replaced it. */
  retire(): void {
    this.retired = true;
  }
}

/**
 * A pool's programs by key: registration (the same program again when the
 * code and host-function names are the same, else a new one that retires the
 * old), look-ups, and `drop`. The pool makes the programs and forgets retired
 * ones its own way.
 */
export abstract class RegistryPool<P extends ProgramBase> {
  private readonly programs = new Map<string, P>();

  abstract readonly isClosed: boolean;
  protected abstract createProgram(spec: ProgramSpec): P;
  /** A program was retired (new code for its key, or `drop`): let go of what it holds. */
  protected abstract forgetProgram(program: P): void;
  /** Refuses host functions the pool cannot run (TypeError). */
  protected checkHostFunctions(_hostFunctions: HostFunctions): void {}

  program(key: string, sources: string | ProgramSource[], options: ProgramOptions = {}): P {
    if (this.isClosed) throw new SandboxError("unavailable", "The sandbox is shut down", { programKey: key });
    this.checkHostFunctions(options.hostFunctions ?? {});
    const list = normaliseSources(sources);
    const hostFns = normaliseHostFunctions(options.hostFunctions);
    const hash = programHash(list, hostFns);
    const existing = this.programs.get(key);
    if (existing && existing.hash === hash) {
      existing.replaceHostFunctions(hostFns);
      return existing;
    }
    const program = this.createProgram({ key, sources: list, hostFns, hash });
    this.programs.set(key, program);
    if (existing) {
      existing.retire();
      this.forgetProgram(existing);
    }
    return program;
  }

  /** The current program registered under `key`, if any. */
  get(key: string): P | undefined {
    return this.programs.get(key);
  }

  /** `pool.get(key).call(...)`; fails with SandboxError("argument") when no program has that key. */
  call(key: string, name: string, args: unknown[] = [], options: CallOptions = {}): Promise<unknown> {
    const program = this.programs.get(key);
    return program ? program.call(name, args, options) : missing(key);
  }

  /** `pool.get(key).evaluate(...)`; fails with SandboxError("argument") when no program has that key. */
  evaluate(
    key: string,
    code: string,
    bindings: Record<string, unknown> = {},
    options: EvaluateOptions = {},
  ): Promise<unknown> {
    const program = this.programs.get(key);
    return program ? program.evaluate(code, bindings, options) : missing(key);
  }

  /** Forgets the program under `key` (e.g. its project was deleted); its isolates go once idle. */
  drop(key: string): void {
    const program = this.programs.get(key);
    if (!program) return;
    this.programs.delete(key);
    program.retire();
    this.forgetProgram(program);
  }

  /** Forgets every program whose key starts with `prefix` (e.g. all of a deleted project's), as `drop` does. */
  dropUnder(prefix: string): void {
    for (const key of [...this.programs.keys()]) if (key.startsWith(prefix)) this.drop(key);
  }

  protected get programCount(): number {
    return this.programs.size;
  }

  protected forgetAllPrograms(): void {
    this.programs.clear();
  }
}

function missing(key: string): Promise<never> {
  return Promise.reject(new SandboxError("argument", `No sandbox program ${key}`, { programKey: key }));
}
