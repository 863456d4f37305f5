/**
 * Finds the authentication provider of a project: the built-in one, the
 * built-in `oidc` one (tokens of the project's OpenID Connect issuer), or the
 * project's custom JavaScript provider running in the sandbox.
 */

import type { PasswordHasher } from "../credentials/passwords.ts";
import type { AuthenticationOf } from "../domain/model/authentication-model.ts";
import type { ProjectModel } from "../domain/model/project-model.ts";
import type { UserStore } from "../store/user-store.ts";
import { createBuiltinProvider } from "./builtin-provider.ts";
import type { AuthProvider } from "./provider.ts";

export interface ProviderRegistry {
  providerFor(project: ProjectModel): AuthProvider;
}

/** The provider of a project whose authentication is of kind `P`. */
export type ProviderFactory<P extends "custom" | "oidc"> = (
  project: ProjectModel,
  authentication: AuthenticationOf<P>,
) => AuthProvider;

export function createProviderRegistry(options: {
  users: UserStore;
  hasher: PasswordHasher;
  custom: ProviderFactory<"custom">;
  oidc: ProviderFactory<"oidc">;
}): ProviderRegistry {
  return {
    providerFor(project) {
      const { authentication } = project;
      if (authentication.provider === "custom") return options.custom(project, authentication);
      if (authentication.provider === "oidc") return options.oidc(project, authentication);
      return createBuiltinProvider({
        users: options.users,
        hasher: options.hasher,
        project,
        projectRoles: new Set(project.roles.keys()),
      });
    },
  };
}
