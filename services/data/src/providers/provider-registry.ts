/**
 * Finds the authentication provider of a project: the built-in one, the
 * built-in `oidc` one (tokens of the project's OpenID Connect issuer), or the
 * project's custom JavaScript provider running in the sandbox.
 */

import type { PasswordHasher } from "../credentials/passwords.ts";
import type { ProjectModel } from "../domain/model/project-model.ts";
import type { UserStore } from "../store/user-store.ts";
import { createBuiltinProvider } from "./builtin-provider.ts";
import type { AuthProvider } from "./provider.ts";

export interface ProviderRegistry {
  providerFor(project: ProjectModel): AuthProvider;
}

export type CustomProviderFactory = (project: ProjectModel) => AuthProvider;

export function createProviderRegistry(options: {
  users: UserStore;
  hasher: PasswordHasher;
  custom: CustomProviderFactory;
  oidc: CustomProviderFactory;
}): ProviderRegistry {
  return {
    providerFor(project) {
      if (project.definition.authentication.provider === "custom") return options.custom(project);
      if (project.definition.authentication.provider === "oidc") return options.oidc(project);
      return createBuiltinProvider({
        users: options.users,
        hasher: options.hasher,
        project,
        projectRoles: new Set(project.roles.keys()),
      });
    },
  };
}
