/**
 * A login by name and password against a stored argon2id hash — the built-in
 * provider's users and account administrators alike — with the password change
 * a login can ask for (`?enablePasswordChange!` with `newPassword` or
 * `new_password`). Unknown names are checked against a dummy hash, so a failure
 * takes as long whatever its reason.
 */
import type { PasswordHasher } from "./passwords.ts";

export interface PasswordHolder {
  passwordHash: string;
}

export interface PasswordChange {
  changePasswordResult: "success" | "failure";
  changePasswordMessage: string;
}

export type PasswordLogin<T> =
  | { ok: false }
  | { ok: true; name: string; holder: T; newPasswordHash?: string; change?: PasswordChange };

export async function checkPasswordLogin<T extends PasswordHolder>(options: {
  hasher: PasswordHasher;
  payload: Record<string, unknown>;
  enablePasswordChange: boolean;
  /** null when there is no such name. */
  find: (name: string) => Promise<T | null>;
  /** Stores the new hash if the stored one is still `expectedHash`; false when it changed meanwhile. */
  changePassword: (name: string, expectedHash: string, newHash: string) => Promise<boolean>;
}): Promise<PasswordLogin<T>> {
  const { hasher, payload } = options;
  const { username, password } = payload;
  if (typeof username !== "string" || typeof password !== "string" || password.length > 4096) {
    return { ok: false };
  }
  const holder = await options.find(username);
  if (!holder) return hasher.verifyAgainstDummy(password).then(() => ({ ok: false }));
  if (!(await hasher.verify(holder.passwordHash, password))) return { ok: false };
  if (hasher.needsRehash(holder.passwordHash) && !options.enablePasswordChange) {
    // An imported hash that verified: argon2id from now on (another request may have done it first).
    await options.changePassword(username, holder.passwordHash, await hasher.hash(password));
  }
  if (!options.enablePasswordChange) return { ok: true, name: username, holder };

  const newPassword = payload.newPassword ?? payload.new_password;
  let problem =
    typeof newPassword === "string"
      ? hasher.policyProblem(newPassword)
      : "no new password was given (newPassword or new_password)";
  let newPasswordHash: string | undefined;
  if (problem === null) {
    newPasswordHash = await hasher.hash(newPassword as string);
    if (!(await options.changePassword(username, holder.passwordHash, newPasswordHash))) {
      problem = "the password was changed by another request at the same time";
      newPasswordHash = undefined;
    }
  }
  const change: PasswordChange =
    problem === null
      ? { changePasswordResult: "success", changePasswordMessage: "The password was changed" }
      : { changePasswordResult: "failure", changePasswordMessage: problem };
  return { ok: true, name: username, holder, newPasswordHash, change };
}
