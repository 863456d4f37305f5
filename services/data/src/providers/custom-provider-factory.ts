/**
 * Custom providers of projects (JavaScript in the sandbox): one sandbox pool
 * per service process (its isolates run in `SANDBOX_PROCESSES` sandbox host
 * processes), one provider instance per project revision (the sandbox itself
 * rebuilds isolates when the library code or config changes).
 */
import { LRUCache } from "lru-cache";
import type { DataConfig } from "../../../../shared/config/config.ts";
import type { Logger } from "../../../../shared/logger.ts";
import { type ProjectModel, programKey } from "../domain/model/project-model.ts";
import {
  FairShare,
  FairSharePool,
  ProcessSandboxPool,
  type RestartReason,
  type SandboxPool,
} from "../sandbox/index.ts";
import { type CustomAuthProvider, createCustomProvider } from "./custom-provider.ts";

/** How many projects' custom providers a process keeps. */
const PROVIDERS = 2000;

export interface CustomProviderFactory {
  /** The pool is shared with the logic engine and the scripts; its calls are admitted by each account's fair share. */
  pool: SandboxPool;
  providerFor(project: ProjectModel): CustomAuthProvider;
  /** Settles once the sandbox processes have started. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createCustomProviderFactory(options: {
  config: DataConfig;
  logger: Logger;
  /** Told the outcome of every sandbox call (metrics). */
  onSandboxCall?: (outcome: string) => void;
  /** Told each time a sandbox host process is replaced, and why (metrics). */
  onSandboxProcessRestart?: (reason: RestartReason) => void;
  /** Told each sandbox call refused by its account's fair share, and why (metrics). */
  onSandboxRefusal?: (reason: string) => void;
  /** Told the isolate CPU time of each call, by account (metering). */
  onSandboxCpuTime?: (account: string, ms: number) => void;
  /** The account's own sandbox CPU budget per window (its plan's); null: SANDBOX_ACCOUNT_CPU_MS. */
  sandboxCpuBudgetOf?: (account: string) => Promise<number | null>;
}): CustomProviderFactory {
  const { config, logger } = options;
  const processes = new ProcessSandboxPool({
    processes: config.SANDBOX_PROCESSES,
    niceness: config.SANDBOX_NICENESS,
    onCall: options.onSandboxCall,
    onProcessRestart: options.onSandboxProcessRestart,
    memoryLimitMb: config.SANDBOX_MEMORY_MB,
    timeoutMs: config.SANDBOX_TIMEOUT_MS,
    allowLoopbackFetch: config.SANDBOX_ALLOW_LOOPBACK_FETCH,
    logger,
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
    onRefusal: options.onSandboxRefusal,
    onCpuTime: options.onSandboxCpuTime,
    cpuBudgetOf: options.sandboxCpuBudgetOf,
  });
  // The most recently used projects' providers; one evicted is made again when next used.
  const providers = new LRUCache<string, { uid: string; revision: number; provider: CustomAuthProvider }>({
    max: PROVIDERS,
  });
  return {
    pool,
    providerFor(project) {
      const id = `${project.account}/${project.name}`;
      const cached = providers.get(id);
      if (cached && cached.uid === project.uid && cached.revision === project.revision)
        return cached.provider;
      const auth = project.definition.authentication;
      const provider = createCustomProvider({
        pool,
        account: project.account,
        programKey: programKey(project, "auth"),
        libraryCode: project.definition.libraries[auth.library!]!.code,
        libraryName: auth.library,
        createFunction: auth.createFunction!,
        config: auth.config ?? {},
        projectRoles: project.roles.keys(),
        exposeProviderMessages: auth.exposeProviderMessages ?? false,
        allowedHosts: auth.allowedHosts ?? [],
        logger,
      });
      providers.set(id, { uid: project.uid, revision: project.revision, provider });
      return provider;
    },
    ready: () => processes.ready(),
    async close() {
      await pool.close();
    },
  };
}
