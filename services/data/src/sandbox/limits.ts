/** Options and limits of a sandbox pool, normalised the same way by both pools. */
import type { SandboxLogger } from "./types.ts";
import type { WorkerLimits } from "./worker.ts";

export interface SandboxPoolOptions {
  /** Told the outcome of every call (`ok`, or the SandboxError kind: `timeout`, `script`, …), e.g. for metrics. */
  onCall?: (outcome: string) => void;
  /** Memory limit of each isolate (isolated-vm `memoryLimit`, min 8). Default 32. */
  memoryLimitMb?: number;
  /** Default wall-clock limit of a call, including time queued for an isolate. Default 1000. */
  timeoutMs?: number;
  /** Upper bound a caller may ask for with `CallOptions.timeoutMs`. Default 30000. */
  maxTimeoutMs?: number;
  /** Time limit for creating an isolate and running the program's top-level code. Default 2 × timeoutMs. */
  loadTimeoutMs?: number;
  /** Isolates that may serve one program at the same time. Default 2. */
  maxIsolatesPerProject?: number;
  /** Isolates in the whole pool (per sandbox process); past it, idle isolates of other programs are evicted. Default 64. */
  maxIsolates?: number;
  /** Calls that may wait for an isolate of one program. Default 100. */
  maxQueuedCallsPerProgram?: number;
  /** An isolate whose used heap exceeds this after a call is replaced. Default memoryLimitMb / 2. */
  recycleAfterHeapMb?: number;
  /** Idle isolates older than this are disposed. Default 5 minutes. */
  idleIsolateTtlMs?: number;
  /** Largest result (JSON, bytes) a call may return. Default 1 MiB. */
  maxResultBytes?: number;
  /** Largest arguments / bindings (JSON, bytes) the host may pass in. Default 4 MiB. */
  maxArgumentBytes?: number;
  /** setTimeout inside the sandbox: at most this many per call … Default 100. */
  maxTimersPerCall?: number;
  /** … each delayed at most this long (a longer delay fires after this one). Default 5000. */
  maxTimerDelayMs?: number;
  /** Development only: lets `tessera.fetchJson` reach loopback addresses (and only those, in addition). */
  allowLoopbackFetch: boolean;
  logger?: SandboxLogger;
}

export type Limits = Required<Omit<SandboxPoolOptions, "logger" | "allowLoopbackFetch" | "onCall">>;

/** Every limit, with its default and lower bound applied. */
export function normaliseLimits(options: Omit<SandboxPoolOptions, "allowLoopbackFetch">): Limits {
  const memoryLimitMb = Math.max(8, options.memoryLimitMb ?? 32);
  const timeoutMs = Math.max(1, options.timeoutMs ?? 1000);
  return {
    memoryLimitMb,
    timeoutMs,
    maxTimeoutMs: Math.max(timeoutMs, options.maxTimeoutMs ?? 30_000),
    loadTimeoutMs: Math.max(1, options.loadTimeoutMs ?? 2 * timeoutMs),
    maxIsolatesPerProject: Math.max(1, options.maxIsolatesPerProject ?? 2),
    maxIsolates: Math.max(1, options.maxIsolates ?? 64),
    maxQueuedCallsPerProgram: Math.max(0, options.maxQueuedCallsPerProgram ?? 100),
    recycleAfterHeapMb: Math.max(1, options.recycleAfterHeapMb ?? Math.floor(memoryLimitMb / 2)),
    idleIsolateTtlMs: Math.max(1000, options.idleIsolateTtlMs ?? 5 * 60_000),
    maxResultBytes: Math.max(1024, options.maxResultBytes ?? 1024 * 1024),
    maxArgumentBytes: Math.max(1024, options.maxArgumentBytes ?? 4 * 1024 * 1024),
    maxTimersPerCall: Math.max(0, options.maxTimersPerCall ?? 100),
    maxTimerDelayMs: Math.max(0, options.maxTimerDelayMs ?? 5000),
  };
}

/** What each isolate is held to. */
export function workerLimits(limits: Limits): WorkerLimits {
  return {
    memoryLimitMb: limits.memoryLimitMb,
    loadTimeoutMs: limits.loadTimeoutMs,
    maxResultBytes: limits.maxResultBytes,
    maxHostArgumentBytes: limits.maxResultBytes,
    maxTimersPerCall: limits.maxTimersPerCall,
    maxTimerDelayMs: limits.maxTimerDelayMs,
    maxConsoleLines: 100,
    maxCompiled: 500,
    healthCheckMs: 250,
    recycleAfterHeapBytes: limits.recycleAfterHeapMb * 1024 * 1024,
  };
}

/** A caller-supplied timeout, within 1 ms .. maxTimeoutMs (the default when it is not a number). */
export function clampTimeout(limits: Limits, ms: number): number {
  if (!Number.isFinite(ms)) return limits.timeoutMs;
  return Math.min(Math.max(1, Math.floor(ms)), limits.maxTimeoutMs);
}
