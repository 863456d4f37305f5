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

export interface CallOptions {
  /** Wall-clock limit of this call, including waiting for a free isolate. Default: the pool's. */
  timeoutMs?: number;
  /** Handed to host functions as `info.context`. Never copied into the sandbox. */
  context?: unknown;
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
}
