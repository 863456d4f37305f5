/**
 * Account administrators on the data API: an admin key opens every project of its
 * own account with full access (role `admin`) or read access (role `reader`), for
 * as long as it would open the admin API — the administrator as stored now
 * (caller.ts): removed, password set since, or account created again, and the key
 * is unknown (401/4011); disabled (signed out) or expired, as for any key.
 */
import type { AdminKeyCheck, AdminKeyRecord } from "../keys/key-validation.ts";
import { type AdminCaller, type AdminDirectory, currentStanding } from "./caller.ts";

/** The check the data API's key validator makes of an administrator's key. */
export function adminKeyCheck(directory: AdminDirectory): AdminKeyCheck {
  return async (record, requestId) => {
    const standing = await currentStanding(directory, record.account, record.admin, requestId);
    return { ...record, admin: { ...record.admin, role: standing.role } };
  };
}

/** The administrator a checked admin key stands for, as the audit trail names them. */
export function adminCallerOfKey(record: AdminKeyRecord): AdminCaller & { kind: "admin" } {
  return {
    kind: "admin",
    account: record.account,
    accountUid: record.admin.accountUid,
    login: record.admin.login,
    role: record.admin.role,
  };
}
