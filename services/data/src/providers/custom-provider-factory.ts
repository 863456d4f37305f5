/**
 * Custom providers of projects (JavaScript in the process's one sandbox,
 * sandbox/create-sandbox.ts): one provider instance per project revision (the
 * sandbox itself rebuilds isolates when the library code or config changes).
 */
import { perAccountCache } from "../../../../shared/cache/per-account-cache.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { AuthenticationOf } from "../domain/model/authentication-model.ts";
import { type ProjectModel, programKey } from "../domain/model/project-model.ts";
import type { SandboxPool } from "../sandbox/index.ts";
import { type CustomAuthProvider, createCustomProvider } from "./custom-provider.ts";

/**
 * What a kept provider holds beyond its cache entry: its closures and settings (its library's code
 * is the project model's), and the text of its config and allowed hosts, counted by characters.
 */
const PROVIDER_BYTES = 2048;

interface KeptProvider {
  uid: string;
  revision: number;
  provider: CustomAuthProvider;
  /** Characters of its settings' text (config, allowed hosts), for its size. */
  settingsChars: number;
}

export interface CustomProviderFactory {
  providerFor(project: ProjectModel, authentication: AuthenticationOf<"custom">): CustomAuthProvider;
}

/**
 * `pool`: the process's sandbox (sandbox/create-sandbox.ts), shared with the logic engine and the
 * scripts; `budgetBytes`: the memory the providers kept may take (PROVIDER_CACHE_MIB).
 */
export function createCustomProviderFactory(options: {
  pool: SandboxPool;
  logger: Logger;
  budgetBytes: number;
}): CustomProviderFactory {
  const { pool, logger } = options;
  // The most recently used projects' providers within the budget; one evicted is made again when next used.
  const providers = perAccountCache<KeptProvider>(
    options.budgetBytes,
    (kept) => PROVIDER_BYTES + 2 * kept.settingsChars,
  );
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
      const settingsChars =
        JSON.stringify(auth.config ?? {}).length + (auth.allowedHosts ?? []).join().length;
      providers.set(id, { uid: project.uid, revision: project.revision, provider, settingsChars });
      return provider;
    },
  };
}
