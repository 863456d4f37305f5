/**
 * Key validation shared by both services: read the key from the request, look up
 * its hash in Redis (one round trip), check scope, status and expiry.
 *
 * An account administrator's key is refused on the data API (401/4012) unless the
 * validator is given `adminKeys`, the check of the administrator as stored now
 * (shared/admin-access/data-access.ts): then it opens every project of its own
 * account — never another account's (4012), and only from the `Authorization`
 * header, never as a URL parameter (4011).
 */
import { errors } from "../errors.ts";
import { hashKey } from "../key-format.ts";
import { type AdminGrant, type KeyRecord, keyState } from "./key-record.ts";
import type { KeyStore } from "./key-store.ts";
import { type KeyCarrier, readKey } from "./key-transport.ts";

export interface KeyScope {
  account: string;
  project: string;
  /** The request's id, for the lookups the check makes (an administrator's standing). */
  requestId?: string;
}

export interface KeyValidator {
  /** The key's record when the request carries a usable key for `scope`; otherwise throws 401. */
  validate(carrier: KeyCarrier, scope: KeyScope): Promise<KeyRecord>;
}

/** An administrator's key record (`admin` set). */
export type AdminKeyRecord = KeyRecord & { admin: AdminGrant };

/**
 * Whether an administrator's key still stands for its administrator: the record
 * with the role in force now, or throws 401/4011 (administrator removed, password
 * set since, account created again).
 */
export type AdminKeyCheck = (record: AdminKeyRecord, requestId: string) => Promise<AdminKeyRecord>;

export interface KeyValidatorOptions {
  now?: () => number;
  /** Accept account administrators' keys for their account's projects (the data API). */
  adminKeys?: AdminKeyCheck;
}

export function createKeyValidator(
  store: KeyStore,
  schemes: readonly string[],
  options: KeyValidatorOptions = {},
): KeyValidator {
  const now = options.now ?? Date.now;
  return {
    async validate(carrier, scope) {
      const key = readKey(carrier, schemes);
      if (key === undefined)
        throw errors.noKey("An API key is required: send 'Authorization: Tessera <key>:1'");
      const record = await store.get(hashKey(key));
      if (!record) throw errors.unknownKey();
      if (record.admin) return adminRecord(record as AdminKeyRecord, carrier, scope);
      if (record.account !== scope.account || record.project !== scope.project) throw errors.wrongScope();
      checkState(record);
      return record;
    },
  };

  function checkState(record: KeyRecord): void {
    const state = keyState(record, now());
    if (state === "disabled") throw errors.keyDisabled();
    if (state === "expired") throw errors.keyExpired();
  }

  async function adminRecord(
    record: AdminKeyRecord,
    carrier: KeyCarrier,
    scope: KeyScope,
  ): Promise<AdminKeyRecord> {
    if (!options.adminKeys || record.account !== scope.account) throw errors.wrongScope();
    // A URL parameter ends up in logs and browser histories: an administrator's key travels in the header only.
    if (carrier.authorization === undefined)
      throw errors.noKey(
        "An administrator's key is accepted in the Authorization header only, never as ?auth=",
      );
    checkState(record);
    return options.adminKeys(record, scope.requestId ?? "");
  }
}
