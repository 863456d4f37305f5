/**
 * The messages between the data service and a sandbox host process (IPC of
 * `child_process.fork`). A call is one message each way (`call`, then
 * `done`); the program's code travels with the first call of that program in
 * that process. Async host functions run in the data service: the process
 * asks (`host`) and gets the answer (`hostAnswer`) while the call runs.
 */
import { SandboxError, type SandboxErrorKind, SandboxTimeoutError } from "./errors.ts";
import type { SandboxPoolOptions } from "./limits.ts";
import type { RequestMode } from "./requests.ts";
import type { ProgramSource, SandboxStats } from "./types.ts";

/** What a sandbox host process is started with (its one command-line argument, as JSON). */
export interface HostProcessOptions {
  limits: Omit<SandboxPoolOptions, "logger" | "onCall" | "allowLoopbackFetch">;
  /** Forward debug-level log lines (the sandbox console); off when the service would drop them. */
  debugLog: boolean;
  /** CPU priority of the process (nice value, 0–19): customer code yields to the service's own work. */
  niceness?: number;
}

export interface ProgramRegistration {
  key: string;
  sources: ProgramSource[];
  /** Paths of the program's (async) host functions. */
  hostFunctions: string[];
}

/** `warm`: start an isolate of the program (no request); the answer is undefined ("R"). */
export type CallMode = RequestMode | "warm";

export type ToHostProcess =
  | {
      t: "call";
      id: number;
      /** The data service's id of the program; `register` comes with its first call in this process. */
      program: number;
      register?: ProgramRegistration;
      mode: CallMode;
      target: string;
      payload: string;
      /** Epoch milliseconds (the machine's clock, shared by both processes). */
      deadline: number;
    }
  /** `answer`: tagged text of host-answers.ts ("R<json>" or "E<json>"). */
  | { t: "hostAnswer"; id: number; answer: string }
  | { t: "drop"; key: string };

export interface WireError {
  kind: SandboxErrorKind;
  message: string;
  timeoutMs?: number;
  scriptError?: { name: string; message: string };
}

export type FromHostProcess =
  | { t: "ready" }
  | {
      t: "done";
      id: number;
      /** The isolate's answer (answers.ts), decoded by the data service. */
      answer?: string;
      error?: WireError;
      /** The process no longer knows the program: register it again with the next call. */
      unregistered?: boolean;
      /** CPU time (ms) the call spent in its isolate; absent when it never reached one. */
      cpuMs?: number;
      stats?: SandboxStats;
    }
  | { t: "host"; id: number; call: number; path: string; args: unknown[] }
  | { t: "log"; level: "debug" | "info" | "warn" | "error"; obj: object; msg?: string }
  | { t: "catastrophic" }
  | { t: "stats"; stats: SandboxStats };

export function toWireError(e: unknown): WireError {
  if (e instanceof SandboxError) {
    return {
      kind: e.kind,
      message: e.message,
      timeoutMs: e instanceof SandboxTimeoutError ? e.timeoutMs : undefined,
      scriptError: e.scriptError,
    };
  }
  return { kind: "crashed", message: `The sandbox host process failed: ${(e as Error)?.message ?? e}` };
}

export function fromWireError(wire: WireError, programKey: string): SandboxError {
  if (wire.kind === "timeout") {
    return new SandboxTimeoutError(wire.timeoutMs ?? 0, wire.message, { programKey });
  }
  return new SandboxError(wire.kind, wire.message, { programKey, scriptError: wire.scriptError });
}
