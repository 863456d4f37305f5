/**
 * Who is calling the admin API: the platform operator (a Bearer ADMIN_TOKEN), or
 * an account administrator (an admin key from the account's `@authentication`,
 * as `Bearer <key>` or `<scheme> <key>:1`). Answers like the data API: no key or
 * an unreadable one 401/4011, an unknown one 4011, a project's key 4012, a
 * disabled one 4014, an expired one 4013. An admin key whose administrator was
 * removed, whose password was set since, or whose account was deleted (even if
 * created again) is unknown: 4011.
 */
import { errors } from "../errors.ts";
import { isBearerToken } from "../http/bearer.ts";
import { hashKey } from "../key-format.ts";
import { type AdminGrant, type AdminRole, keyState } from "../keys/key-record.ts";
import type { KeyStore } from "../keys/key-store.ts";
import { readKey } from "../keys/key-transport.ts";

export type AdminCaller =
  | { kind: "operator" }
  | { kind: "admin"; account: string; accountUid: string; login: string; role: AdminRole };

/** An account administrator as stored now. */
export interface AdminStanding {
  accountUid: string;
  role: AdminRole;
  credentialStamp: string;
}

/** Where the administrators live (the data service's metadata; the auth service asks it). */
export interface AdminDirectory {
  /** null when the account or the administrator does not exist. */
  find(account: string, login: string, requestId: string): Promise<AdminStanding | null>;
}

export interface AdminCallerDeps {
  adminTokens: readonly string[];
  keys: KeyStore;
  /** Scheme words accepted besides `Bearer` (AUTH_SCHEMES). */
  schemes: readonly string[];
  directory: AdminDirectory;
  now: () => number;
}

const NO_CREDENTIAL =
  "The admin API needs 'Authorization: Bearer <admin token or admin key>' (an admin key comes from POST /admin/v1/accounts/<account>/@authentication)";

export async function resolveAdminCaller(
  deps: AdminCallerDeps,
  authorization: string | undefined,
  requestId: string,
): Promise<AdminCaller> {
  if (!authorization) throw errors.noKey(NO_CREDENTIAL);
  if (isBearerToken(authorization, deps.adminTokens)) return { kind: "operator" };
  // Keys travel in the header only: a URL parameter would end up in logs and browser histories.
  const key = readKey({ method: "", authorization, authParams: [] }, ["Bearer", ...deps.schemes]);
  if (key === undefined) throw errors.noKey(NO_CREDENTIAL);
  const record = await deps.keys.get(hashKey(key));
  if (!record) throw errors.unknownKey();
  if (!record.admin) throw errors.wrongScope();
  const state = keyState(record, deps.now());
  if (state === "disabled") throw errors.keyDisabled();
  if (state === "expired") throw errors.keyExpired();
  const grant = record.admin;
  const standing = await currentStanding(deps.directory, record.account, grant, requestId);
  return {
    kind: "admin",
    account: record.account,
    accountUid: standing.accountUid,
    login: grant.login,
    role: standing.role,
  };
}

/**
 * The administrator an admin key's grant stands for, as stored now; 4011 when
 * they are gone, their password was set since, or the account was created again.
 */
export async function currentStanding(
  directory: AdminDirectory,
  account: string,
  grant: AdminGrant,
  requestId: string,
): Promise<AdminStanding> {
  const standing = await directory.find(account, grant.login, requestId);
  if (
    !standing ||
    standing.accountUid !== grant.accountUid ||
    standing.credentialStamp !== grant.credentialStamp
  ) {
    throw errors.unknownKey();
  }
  return standing;
}
