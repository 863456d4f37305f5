/**
 * Custom providers of projects (JavaScript in the process's one sandbox,
 * sandbox/create-sandbox.ts): one provider instance per project revision (the
 * sandbox itself rebuilds isolates when the library code or config changes).
 */
import { LRUCache } from "lru-cache";
import type { Logger } from "../../../../shared/logger.ts";
import type { AuthenticationOf } from "../domain/model/authentication-model.ts";
import { type ProjectModel, programKey } from "../domain/model/project-model.ts";
import type { SandboxPool } from "../sandbox/index.ts";
import { type CustomAuthProvider, createCustomProvider } from "./custom-provider.ts";

/** How many projects' custom providers a process keeps. */
const PROVIDERS = 2000;

export interface CustomProviderFactory {
  providerFor(project: ProjectModel, authentication: AuthenticationOf<"custom">): CustomAuthProvider;
}

/** `pool`: the process's sandbox (sandbox/create-sandbox.ts), shared with the logic engine and the scripts. */
export function createCustomProviderFactory(options: {
  pool: SandboxPool;
  logger: Logger;
}): CustomProviderFactory {
  const { pool, logger } = options;
  // The most recently used projects' providers; one evicted is made again when next used.
  const providers = new LRUCache<string, { uid: string; revision: number; provider: CustomAuthProvider }>({
    max: PROVIDERS,
  });
  return {
    providerFor(project, authentication) {
      const id = `${project.account}/${project.name}`;
      const cached = providers.get(id);
      if (cached && cached.uid === project.uid && cached.revision === project.revision)
        return cached.provider;
      const auth = authentication.settings;
      const provider = createCustomProvider({
        pool,
        account: project.account,
        programKey: programKey(project, "auth"),
        libraryCode: authentication.library.code,
        libraryName: authentication.library.name,
        createFunction: authentication.createFunction,
        config: auth.config ?? {},
        projectRoles: project.roles.keys(),
        exposeProviderMessages: auth.exposeProviderMessages ?? false,
        allowedHosts: auth.allowedHosts ?? [],
        logger,
      });
      providers.set(id, { uid: project.uid, revision: project.revision, provider });
      return provider;
    },
  };
}
