/**
 * The built-in provider: users stored per project (admin API), passwords
 * checked with argon2id; supports password change on login.
 */
import { REFUSED } from "../../../../shared/contracts/internal-api.ts";
import { checkPasswordLogin } from "../credentials/password-login.ts";
import type { PasswordHasher } from "../credentials/passwords.ts";
import type { ProjectIncarnation, UserStore } from "../store/user-store.ts";
import type { AuthProvider, LoginInfo } from "./provider.ts";

export const BUILTIN_LOGIN_INFO: LoginInfo = {
  fields: [
    { name: "username", display: "User name", type: "text" },
    { name: "password", display: "Password", type: "password" },
  ],
  links: [],
};

export function createBuiltinProvider(options: {
  users: UserStore;
  hasher: PasswordHasher;
  /** The project's incarnation: only its own users log in. */
  project: ProjectIncarnation;
  projectRoles: ReadonlySet<string>;
}): AuthProvider {
  const { users, hasher, project, projectRoles } = options;
  return {
    getLoginInfo: async () => BUILTIN_LOGIN_INFO,
    async authenticate({ payload, enablePasswordChange }) {
      const login = await checkPasswordLogin({
        hasher,
        payload,
        enablePasswordChange,
        find: (username) => users.get(project, username),
        changePassword: (username, expectedHash, newHash) =>
          users.changePassword(project, username, expectedHash, newHash),
      });
      if (!login.ok) return REFUSED;
      const user = login.holder;
      return {
        ok: true,
        userIdentifier: login.name,
        roles: user.roles.filter((r) => projectRoles.has(r)),
        globals: user.globals,
        keyLifetimeSeconds: user.keyLifetimeSeconds,
        ...login.change,
      };
    },
  };
}
