/**
 * The process's one sandbox (SANDBOX_* settings; docs/javascript.md): its isolates in
 * SANDBOX_PROCESSES sandbox host processes, every call admitted by its account's fair share. Made
 * once by the composition root and handed to the custom providers, the reactive logic rules and
 * the API versions' scripts alike; its calls, process restarts and refusals are counted in the
 * service's metrics.
 */
import type { DataConfig } from "../../../../shared/config/config.ts";
import type { Metrics } from "../../../../shared/http/metrics.ts";
import type { Logger } from "../../../../shared/logger.ts";
import { FairShare } from "./fair-share.ts";
import { FairSharePool } from "./fair-share-pool.ts";
import { ProcessSandboxPool } from "./process-pool.ts";
import type { SandboxPool } from "./types.ts";

export interface Sandbox {
  /** The calls of every account, admitted by its fair share. */
  pool: SandboxPool;
  /** Settles once the sandbox processes have started. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** What the sandbox needs of each account: its CPU time metered, its plan's CPU budget. */
export interface SandboxAccounts {
  logger: Logger;
  /** Told the isolate CPU time of each call, by account (metering). */
  onCpuTime?: (account: string, ms: number) => void;
  /** The account's own sandbox CPU budget per window (its plan's); null: SANDBOX_ACCOUNT_CPU_MS. */
  cpuBudgetOf?: (account: string) => Promise<number | null>;
}

export function createSandbox(config: DataConfig, metrics: Metrics, accounts: SandboxAccounts): Sandbox {
  const calls = metrics.counter("tessera_sandbox_calls_total", "Sandbox calls by outcome (ok, timeout, …)", [
    "outcome",
  ]);
  const restarts = metrics.counter(
    "tessera_sandbox_process_restarts_total",
    "Sandbox host processes replaced, by reason (catastrophic, crashed, unresponsive)",
    ["reason"],
    { reason: ["catastrophic", "crashed", "unresponsive"] },
  );
  const refusals = metrics.counter(
    "tessera_sandbox_refusals_total",
    "Sandbox calls refused (429) by their account's fair share, by reason (cpu, queue)",
    ["reason"],
    { reason: ["cpu", "queue"] },
  );
  const processes = new ProcessSandboxPool({
    processes: config.SANDBOX_PROCESSES,
    niceness: config.SANDBOX_NICENESS,
    onCall: (outcome) => calls.inc({ outcome }),
    onProcessRestart: (reason) => restarts.inc({ reason }),
    memoryLimitMb: config.SANDBOX_MEMORY_MB,
    timeoutMs: config.SANDBOX_TIMEOUT_MS,
    allowLoopbackFetch: config.SANDBOX_ALLOW_LOOPBACK_FETCH,
    logger: accounts.logger,
  });
  const share = new FairShare({
    accountConcurrency: config.SANDBOX_ACCOUNT_CONCURRENCY,
    totalConcurrency: config.SANDBOX_CONCURRENCY,
    accountCpuMs: config.SANDBOX_ACCOUNT_CPU_MS,
    windowMs: config.SANDBOX_ACCOUNT_CPU_WINDOW_MS,
    accountQueue: config.SANDBOX_ACCOUNT_QUEUE,
  });
  const pool = new FairSharePool(processes, share, {
    timeoutMs: config.SANDBOX_TIMEOUT_MS,
    onRefusal: (reason) => refusals.inc({ reason }),
    onCpuTime: accounts.onCpuTime,
    cpuBudgetOf: accounts.cpuBudgetOf,
  });
  return {
    pool,
    ready: () => processes.ready(),
    close: () => pool.close(),
  };
}
