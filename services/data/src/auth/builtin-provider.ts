/**
 * The built-in provider: users stored per project (admin API), passwords
 * checked with argon2id; supports password change on login.
 */
import { GENERIC_LOGIN_FAILURE } from "../../../../shared/contracts/internal-api.ts";
import type { MetaStore } from "../store/meta-store.ts";
import type { PasswordHasher } from "./passwords.ts";
import type { AuthProvider, ChangePasswordResult, LoginInfo, ProviderVerdict } from "./provider.ts";

const FAILED: ProviderVerdict = { ok: false, message: GENERIC_LOGIN_FAILURE };

export const BUILTIN_LOGIN_INFO: LoginInfo = {
  fields: [
    { name: "username", display: "User name", type: "text" },
    { name: "password", display: "Password", type: "password" },
  ],
  links: [],
};

export function createBuiltinProvider(options: {
  meta: MetaStore;
  hasher: PasswordHasher;
  account: string;
  project: string;
  projectRoles: ReadonlySet<string>;
}): AuthProvider {
  const { meta, hasher, account, project, projectRoles } = options;
  return {
    getLoginInfo: async () => BUILTIN_LOGIN_INFO,
    async authenticate({ payload, enablePasswordChange }) {
      const { username, password } = payload;
      if (typeof username !== "string" || typeof password !== "string" || password.length > 4096) {
        return FAILED;
      }
      const user = await meta.getUser(account, project, username);
      if (!user) return hasher.verifyAgainstDummy(password).then(() => FAILED);
      if (!(await hasher.verify(user.passwordHash, password))) return FAILED;

      let change: { changePasswordResult: ChangePasswordResult; changePasswordMessage: string } | undefined;
      if (enablePasswordChange) {
        const newPassword = payload.newPassword ?? payload.new_password;
        let problem: string | null;
        if (typeof newPassword !== "string")
          problem = "no new password was given (newPassword or new_password)";
        else problem = hasher.policyProblem(newPassword);
        if (problem === null) {
          const changed = await meta.changePassword(
            account,
            project,
            username,
            user.passwordHash,
            await hasher.hash(newPassword as string),
          );
          if (!changed) problem = "the password was changed by another request at the same time";
        }
        change =
          problem === null
            ? { changePasswordResult: "success", changePasswordMessage: "The password was changed" }
            : { changePasswordResult: "failure", changePasswordMessage: problem };
      }
      return {
        ok: true,
        userIdentifier: username,
        roles: user.roles.filter((r) => projectRoles.has(r)),
        globals: user.globals,
        keyLifetimeSeconds: user.keyLifetimeSeconds,
        ...change,
      };
    },
  };
}
