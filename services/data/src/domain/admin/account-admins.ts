/**
 * Account administrators: who counts as the account's last admin, and the
 * verdict on an administrator's login (asked for by the auth service, which
 * mints the key).
 */
import { randomBytes } from "node:crypto";
import type { AdminDirectory } from "../../../../../shared/admin-access/caller.ts";
import {
  type AdminInfo,
  type AdminLoginBody,
  type AdminLoginResponse,
  REFUSED,
} from "../../../../../shared/contracts/internal-api.ts";
import type { AdminRole } from "../../../../../shared/keys/key-record.ts";
import { present } from "../../../../../shared/present.ts";
import { checkPasswordLogin } from "../../credentials/password-login.ts";
import type { PasswordHasher } from "../../credentials/passwords.ts";
import type { AdminStore, StoredAdmin } from "../../store/admin-store.ts";
import type { MetaStore } from "../../store/meta-store.ts";

/** A new credential stamp: set with every new password, it revokes the keys minted before. */
export function newCredentialStamp(): string {
  return randomBytes(12).toString("base64url");
}

/**
 * Why an account administrator may not give `login` the role `role` (null:
 * remove it), or null when they may: the account must keep at least one admin.
 * (The operator is not held to this.)
 */
export function lastAdminProblem(
  admins: readonly { login: string; role: AdminRole }[],
  login: string,
  role: AdminRole | null,
): string | null {
  const target = admins.find((a) => a.login === login);
  if (target?.role !== "admin" || role === "admin") return null;
  if (admins.some((a) => a.role === "admin" && a.login !== login)) return null;
  return `'${login}' is the account's last admin: make another admin first (or ask the platform operator)`;
}

export function adminInfo(admin: StoredAdmin): AdminInfo {
  return {
    login: admin.login,
    role: admin.role,
    accountUid: admin.accountUid,
    credentialStamp: admin.credentialStamp,
  };
}

export interface AdminLoginDeps {
  meta: MetaStore;
  admins: AdminStore;
  hasher: PasswordHasher;
}

export async function authenticateAdmin(
  deps: AdminLoginDeps,
  account: string,
  body: AdminLoginBody,
): Promise<AdminLoginResponse> {
  const accountDoc = await deps.meta.getAccount(account);
  // No such account: checked against nothing, as long as for an unknown login.
  const accountUid = accountDoc ? deps.meta.accountUid(accountDoc) : undefined;
  let newStamp = "";
  const login = await checkPasswordLogin({
    hasher: deps.hasher,
    payload: body.payload,
    enablePasswordChange: body.enablePasswordChange,
    find: async (name) => (accountUid === undefined ? null : deps.admins.get(accountUid, name)),
    changePassword: (name, expectedHash, passwordHash) => {
      newStamp = newCredentialStamp();
      return deps.admins.changePassword(
        present(accountUid, "the account's incarnation"),
        name,
        expectedHash,
        {
          passwordHash,
          credentialStamp: newStamp,
        },
      );
    },
  });
  if (!login.ok) return { verdict: REFUSED };
  const info = adminInfo(login.holder);
  if (login.newPasswordHash !== undefined) info.credentialStamp = newStamp;
  return { verdict: { ok: true, ...info, ...login.change } };
}

/** The administrators as the admin gate needs them (shared/admin-access/caller.ts). */
export function createAdminDirectory(meta: MetaStore, admins: AdminStore): AdminDirectory {
  return {
    async find(account, login) {
      const doc = await meta.getAccount(account);
      if (!doc) return null;
      const admin = await admins.get(meta.accountUid(doc), login);
      return admin ? adminInfo(admin) : null;
    },
  };
}
