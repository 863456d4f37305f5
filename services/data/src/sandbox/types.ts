/** Public types of the sandbox module. */

/** Minimal structured logger (pino's Logger fits). */
export interface SandboxLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: SandboxLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/** What a host function learns about the call it serves. */
export interface HostCallInfo {
  /** Key of the program whose code made the call. */
  programKey: string;
  /** The opaque value the caller passed as `CallOptions.context` (e.g. a transaction). */
  context: unknown;
  /** Aborted when the call ends (answer, error or timeout); pass it on to I/O. */
  signal: AbortSignal;
  /** Epoch milliseconds by which the whole call must be over. */
  deadline: number;
  /** Scratch space that lives as long as this call (per-call counters and the like). */
  callState: Map<string, unknown>;
}

/**
 * A function the host hands to sandboxed code. It receives the script's
 * arguments as copied plain JSON data and answers with plain JSON data (or a
 * promise of it). Throw `SandboxHostError` to reject with a message the script
 * may see; any other error reaches the script as a generic failure.
 */
export type HostFunction = (args: unknown[], info: HostCallInfo) => unknown;

/**
 * `sync: true` makes the function synchronous inside the sandbox (the isolate
 * blocks until it returns; the function must not return a promise). Default:
 * the script sees an async function returning a promise.
 */
export type HostFunctionSpec = HostFunction | { fn: HostFunction; sync?: boolean };

/** Host functions by dotted global path, e.g. `"tessera.fetchJson"`, `"logicContext.insert"`. */
export type HostFunctions = Record<string, HostFunctionSpec>;

export interface ProgramSource {
  code: string;
  /** Shown in stack traces and syntax errors. */
  filename?: string;
}

/** How a program is registered (`SandboxPool.program`). */
export interface ProgramOptions {
  hostFunctions?: HostFunctions;
  /**
   * Whose work the program's calls are: the fair share (`FairSharePool`)
   * admits calls per account. Without one the program's key stands for it.
   */
  account?: string;
}

export interface CallOptions {
  /** Wall-clock limit of this call, including waiting for a free isolate. Default: the pool's. */
  timeoutMs?: number;
  /** Handed to host functions as `info.context`. Never copied into the sandbox. */
  context?: unknown;
  /**
   * Told the CPU time (ms) the call spent in its isolate, once, when the call
   * ends (also when it fails). Not told when the call never reached an isolate.
   */
  onCpuTime?: (ms: number) => void;
}

export interface EvaluateOptions extends CallOptions {
  /**
   * `expression` (default): `code` is one JavaScript expression whose value is the result.
   * `body`: `code` is the body of an async function; `return` gives the result.
   * Both may use `await`.
   */
  kind?: "expression" | "body";
}

export interface SandboxStats {
  programs: number;
  isolates: number;
  busy: number;
  idle: number;
  queued: number;
  /** Isolates disposed since the pool started, by reason. */
  disposed: Record<string, number>;
  catastrophicErrors: number;
  /** Sandbox host processes (process pool only): running now, and restarts since the pool started by reason. */
  processes?: { running: number; retiring: number; restarts: Record<string, number> };
}

/** A program: its code, its host functions and the isolates that run it. Get one from `SandboxPool.program`. */
export interface SandboxProgram {
  readonly key: string;
  /**
   * Calls a function of the program: a global function name or a dotted path
   * (`lib.fn`, called with `lib` as `this`), with `args` copied in as JSON.
   * Resolves to the (awaited) result, copied out as plain JSON data.
   */
  call(name: string, args?: unknown[], options?: CallOptions): Promise<unknown>;
  /**
   * Evaluates `code` (an expression, or with `kind: "body"` an async function
   * body) with `bindings` as local variables, e.g. `row`, `oldRow`. A binding
   * named like a host-function namespace (`logicContext`) also gets that
   * namespace's functions merged into it.
   */
  evaluate(code: string, bindings?: Record<string, unknown>, options?: EvaluateOptions): Promise<unknown>;
  /** Starts one isolate now (if none exists) so that the first call is fast and load errors show early. */
  warm(timeoutMs?: number): Promise<void>;
  /** True once another registration of the same key (new code) or `drop` replaced this program. */
  readonly isRetired: boolean;
}

/**
 * Where sandboxed programs run: `ProcessSandboxPool` (production: isolates in
 * sandbox host processes) or `IsolatePool` (isolates in this process; tests).
 */
export interface SandboxPool {
  /** Development only: `tessera.fetchJson` may reach loopback addresses. */
  readonly allowLoopbackFetch: boolean;
  /**
   * The program registered under `key` with this code and these host
   * functions. Same code and host-function names as the current registration:
   * the same (warm) program, with the host-function implementations updated.
   * Different: a new program; the old one is retired.
   */
  program(key: string, sources: string | ProgramSource[], options?: ProgramOptions): SandboxProgram;
  /** The current program registered under `key`, if any. */
  get(key: string): SandboxProgram | undefined;
  /** `pool.get(key).call(...)`; fails with SandboxError("argument") when no program has that key. */
  call(key: string, name: string, args?: unknown[], options?: CallOptions): Promise<unknown>;
  /** `pool.get(key).evaluate(...)`; fails with SandboxError("argument") when no program has that key. */
  evaluate(
    key: string,
    code: string,
    bindings?: Record<string, unknown>,
    options?: EvaluateOptions,
  ): Promise<unknown>;
  /** Forgets the program under `key` (e.g. its project was deleted) and disposes its isolates when idle. */
  drop(key: string): void;
  /** `drop` for every program whose key starts with `prefix`. */
  dropUnder(prefix: string): void;
  stats(): SandboxStats;
  readonly isClosed: boolean;
  /** Disposes every isolate; pending and later calls fail with SandboxError("unavailable"). */
  close(): Promise<void>;
}
