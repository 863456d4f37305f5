/**
 * The `oidc` providers of projects: one per project revision, kept so that
 * its issuer's discovery document and key set stay cached between logins
 * (oidc-keys.ts). A new revision (a changed issuer, say) starts afresh.
 */
import { perAccountCache } from "../../../../shared/cache/per-account-cache.ts";
import { DEFAULT_KEY_LIFETIME_SECONDS } from "../domain/definition/project-definition.ts";
import type { AuthenticationOf } from "../domain/model/authentication-model.ts";
import type { ProjectModel } from "../domain/model/project-model.ts";
import type { SandboxLogger } from "../sandbox/index.ts";
import { createOidcKeys, type OidcKeysOptions } from "./oidc-keys.ts";
import { createOidcProvider } from "./oidc-provider.ts";
import type { AuthProvider } from "./provider.ts";

/**
 * What a kept provider holds beyond its cache entry: its settings and, once it has verified a login,
 * its issuer's discovery document and key set (a few keys, a few KiB of JSON and their parsed form).
 */
const PROVIDER_BYTES = 16 * 1024;

export interface OidcProviderFactoryOptions {
  /** The operator's allowance of loopback egress (SANDBOX_ALLOW_LOOPBACK_FETCH), as for custom providers. */
  allowLoopback: boolean;
  logger: SandboxLogger;
  /** The memory the providers kept may take (PROVIDER_CACHE_MIB). */
  budgetBytes: number;
  /** Limits of the issuer fetches (tests shorten the refetch interval). */
  keys?: Pick<OidcKeysOptions, "timeoutMs" | "refetchIntervalMs" | "resolve">;
}

export function createOidcProviderFactory(
  options: OidcProviderFactoryOptions,
): (project: ProjectModel, authentication: AuthenticationOf<"oidc">) => AuthProvider {
  // The most recently used projects' providers within the budget; one evicted starts afresh when next used.
  const providers = perAccountCache<{ uid: string; revision: number; provider: AuthProvider }>(
    options.budgetBytes,
    PROVIDER_BYTES,
  );
  return (project, authentication) => {
    const id = `${project.account}/${project.name}`;
    const cached = providers.get(id);
    if (cached && cached.uid === project.uid && cached.revision === project.revision) return cached.provider;
    const auth = authentication.settings;
    const settings = authentication.oidc;
    const programKey = `${id}/oidc`;
    const provider = createOidcProvider({
      settings,
      keys: createOidcKeys({
        ...options.keys,
        issuer: settings.issuer,
        allowedHosts: auth.allowedHosts ?? [],
        allowLoopback: options.allowLoopback,
      }),
      projectRoles: new Set(project.roles.keys()),
      keyLifetimeSeconds: auth.keyLifetimeSeconds ?? DEFAULT_KEY_LIFETIME_SECONDS,
      programKey,
      logger: options.logger,
    });
    providers.set(id, { uid: project.uid, revision: project.revision, provider });
    return provider;
  };
}
