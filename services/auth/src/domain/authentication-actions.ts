/**
 * What every `@authentication` resource does the same way — a project's users'
 * and an account's administrators' alike: read the body as a login, a
 * revalidation or a disable; revalidate or disable a key (no verifier called);
 * reserve a login's attempt with a throttle before its credentials are checked
 * and settle it by the verdict; store a new key and answer it.
 */
import { errors } from "../../../../shared/errors.ts";
import { generateKey, hashKey } from "../../../../shared/key-format.ts";
import { type KeyRecord, keyState } from "../../../../shared/keys/key-record.ts";
import type { KeyCountLimit, KeyStore } from "../../../../shared/keys/key-store.ts";
import type { Logger } from "../../../../shared/logger.ts";
import { formatExpiration } from "../../../../shared/time.ts";
import type { AttemptScope, AttemptThrottle } from "../store/attempt-throttle.ts";

export type LoginOutcome = "success" | "failure" | "throttled";

/** What every @authentication resource works with. */
export interface AuthenticationDepsBase {
  keys: KeyStore;
  logger: Logger;
  now: () => number;
  onLogin?: (outcome: LoginOutcome) => void;
}

/** What every @authentication request carries, whichever resource it is. */
export interface AuthenticationRequestBase {
  account: string;
  body: unknown;
  /** The URL had `?enablePasswordChange!`. */
  enablePasswordChange: boolean;
  /** The client's address (from a trusted proxy, or the socket), for the throttle. */
  clientAddress: string;
  requestId: string;
}

export type AuthenticationAction =
  | { kind: "login"; payload: Record<string, unknown> }
  | { kind: "revalidate" | "disable"; key: string };

/** A body with `username` or `password` (or without `apikey`) is a login, always. */
export function readAuthenticationBody(body: unknown): AuthenticationAction {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw errors.malformed(
      "The body must be a JSON object: credentials, or 'apikey' to revalidate or disable a key",
    );
  }
  const fields = body as Record<string, unknown>;
  if ("username" in fields || "password" in fields || !("apikey" in fields)) {
    return { kind: "login", payload: fields };
  }
  if (typeof fields.apikey !== "string") throw errors.malformed("'apikey' must be a string");
  if (fields.disable !== undefined && typeof fields.disable !== "boolean") {
    throw errors.malformed("'disable' must be true or false");
  }
  return { kind: fields.disable === true ? "disable" : "revalidate", key: keyWithoutSuffix(fields.apikey) };
}

/** `check` throws (401/4012) when the key is not one this resource may speak for. */
export type KeyCheck = (record: KeyRecord) => void | Promise<void>;

/**
 * Revalidation: the key's answer with its original expiry; unknown 4011,
 * expired 4013, disabled 4014. `stillValid` checks what only the key's owner
 * knows (last, after the key's own state).
 */
export async function revalidateKey(
  keys: KeyStore,
  now: number,
  key: string,
  check: KeyCheck,
  stillValid: KeyCheck = () => {},
) {
  const record = await keys.get(hashKey(key));
  if (!record) throw errors.unknownKey();
  await check(record);
  const state = keyState(record, now);
  if (state === "expired") throw errors.keyExpired();
  if (state === "disabled") throw errors.keyDisabled();
  await stillValid(record);
  return keyAnswer(key, record);
}

/** Disable: also of an already disabled or expired key; unknown 404/4042. */
export async function disableKey(keys: KeyStore, key: string, check: KeyCheck) {
  const hash = hashKey(key);
  const record = await keys.get(hash);
  if (!record) throw errors.keyNotFound();
  await check(record);
  if (!(await keys.disable(hash, record))) throw errors.keyNotFound();
  return { apikey: key, disabled: true };
}

function keyAnswer(apikey: string, record: KeyRecord): Record<string, unknown> {
  return {
    apikey,
    expiration: record.expiresAt === null ? null : formatExpiration(record.expiresAt),
    userIdentifier: record.userIdentifier,
    roles: record.roles,
  };
}

/**
 * Stores a new key for `record` and answers it as a login does; given `limit` (the plan's
 * apiKeysPerProject), refuses with its error when the project has that many active keys already.
 */
export async function mintKey(
  keys: KeyStore,
  record: KeyRecord,
  now: number,
  limit?: KeyCountLimit,
): Promise<Record<string, unknown>> {
  const apikey = generateKey();
  await keys.create(hashKey(apikey), record, now, limit);
  return keyAnswer(apikey, record);
}

/**
 * Reserves the attempt (429/4291 when the throttle refuses for failures, 503/5031
 * when other attempts of the subject stayed in flight for the whole wait), asks for the
 * verdict, and settles the attempt by it: `null` (nothing to check against) and
 * errors give the slots back. Answers the verdict (or null).
 */
export async function throttledVerdict<V>(
  throttle: AttemptThrottle,
  scope: AttemptScope,
  verify: () => Promise<V | null>,
  succeeded: (verdict: V) => boolean,
  onLogin?: (outcome: LoginOutcome) => void,
): Promise<V | null> {
  const attempt = await throttle.reserve(scope);
  if (!attempt.ok) {
    onLogin?.("throttled");
    throw attempt.reason === "busy"
      ? errors.attemptsInFlight(attempt.retryAfterSeconds)
      : errors.tooManyAttempts(attempt.retryAfterSeconds);
  }
  const { reservation } = attempt;
  let verdict: V | null;
  try {
    verdict = await verify();
  } catch (err) {
    await reservation.abandoned();
    throw err;
  }
  if (verdict === null) {
    await reservation.abandoned();
    return null;
  }
  if (succeeded(verdict)) {
    await reservation.succeeded();
  } else {
    await reservation.failed();
    onLogin?.("failure");
  }
  return verdict;
}

/** The key without its `:1` part (or any other `:` suffix). */
function keyWithoutSuffix(apikey: string): string {
  const colon = apikey.indexOf(":");
  return colon === -1 ? apikey : apikey.slice(0, colon);
}
