/**
 * Key validation shared by both services: read the key from the request, look up
 * its hash in Redis (one round trip), check scope, status and expiry.
 */
import { errors } from "../errors.ts";
import { hashKey } from "../key-format.ts";
import { type KeyRecord, keyState } from "./key-record.ts";
import type { KeyStore } from "./key-store.ts";
import { type KeyCarrier, readKey } from "./key-transport.ts";

export interface KeyScope {
  account: string;
  project: string;
}

export interface KeyValidator {
  /** The key's record when the request carries a usable key for `scope`; otherwise throws 401. */
  validate(carrier: KeyCarrier, scope: KeyScope): Promise<KeyRecord>;
}

export function createKeyValidator(
  store: KeyStore,
  schemes: readonly string[],
  now = Date.now,
): KeyValidator {
  return {
    async validate(carrier, scope) {
      const key = readKey(carrier, schemes);
      if (key === undefined)
        throw errors.noKey("An API key is required: send 'Authorization: Tessera <key>:1'");
      const record = await store.get(hashKey(key));
      if (!record) throw errors.unknownKey();
      // An account administrator's key opens the admin API only, never a project's data.
      if (record.admin || record.account !== scope.account || record.project !== scope.project)
        throw errors.wrongScope();
      const state = keyState(record, now());
      if (state === "disabled") throw errors.keyDisabled();
      if (state === "expired") throw errors.keyExpired();
      return record;
    },
  };
}
