/**
 * Custom providers of projects (JavaScript in the sandbox): one sandbox pool
 * per process, one provider instance per project revision (the sandbox itself
 * rebuilds isolates when the library code or config changes).
 */
import type { DataConfig } from "../../../../shared/config.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { ProjectModel } from "../domain/project-model.ts";
import { SandboxPool } from "../sandbox/index.ts";
import { type CustomAuthProvider, createCustomProvider } from "./custom-provider.ts";

export interface CustomProviderFactory {
  /** The pool is shared with the logic engine. */
  pool: SandboxPool;
  providerFor(project: ProjectModel): CustomAuthProvider;
  close(): Promise<void>;
}

export function createCustomProviderFactory(options: {
  config: DataConfig;
  logger: Logger;
  /** Told the outcome of every sandbox call (metrics). */
  onSandboxCall?: (outcome: string) => void;
}): CustomProviderFactory {
  const { config, logger } = options;
  const pool = new SandboxPool({
    onCall: options.onSandboxCall,
    memoryLimitMb: config.SANDBOX_MEMORY_MB,
    timeoutMs: config.SANDBOX_TIMEOUT_MS,
    allowLoopbackFetch: config.SANDBOX_ALLOW_LOOPBACK_FETCH,
    logger,
  });
  const providers = new Map<string, { uid: string; revision: number; provider: CustomAuthProvider }>();
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
        programKey: `${id}/auth`,
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
    async close() {
      await pool.close();
    },
  };
}
