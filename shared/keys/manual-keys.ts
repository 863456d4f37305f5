/**
 * Manual API keys (admin API): created by an operator for machine-to-machine
 * use; the value is shown once; listings show every key of a project (generated
 * and manual) without values or hashes. The auth service's key routes create
 * them, and so does the data service's import of a Live API Creator project
 * (its keys, with their values where kept).
 */
import { z } from "zod";
import { errors } from "../errors.ts";
import { parseBody } from "../http/parse-body.ts";
import { generateKey, generateKeyId, hashKey, MANUAL_KEY_PATTERN } from "../key-format.ts";
import { formatExpiration } from "../time.ts";
import { type KeyRecord, keyState } from "./key-record.ts";
import type { KeyCountLimit, KeyStore } from "./key-store.ts";

export const manualKeyBody = z.strictObject({
  name: z.string().min(1).max(200),
  roles: z.array(z.string().min(1).max(100)).max(100),
  userIdentifier: z.string().max(200).optional(),
  apikey: z
    .string()
    .regex(MANUAL_KEY_PATTERN, "8 to 200 characters of A-Z a-z 0-9 _ . ~ + / = -, no colon")
    .optional(),
  /** ISO 8601; without a zone it is read as UTC. Absent: the key does not expire. */
  expiration: z.string().max(40).optional(),
  globals: z.record(z.string().max(200), z.unknown()).optional(),
  description: z.string().max(2000).optional(),
});

export interface ManualKeyDeps {
  keys: KeyStore;
  now: () => number;
  /** The plan's most active keys of a project of the account (absent or undefined: none). */
  keyLimit?: (account: string) => Promise<KeyCountLimit | undefined>;
}

export function keyView(record: KeyRecord, now: number) {
  return {
    id: record.id,
    name: record.name,
    kind: record.kind,
    status: keyState(record, now),
    expiration: record.expiresAt === null ? null : formatExpiration(record.expiresAt),
    roles: record.roles,
    userIdentifier: record.userIdentifier,
    description: record.description ?? null,
    created: formatExpiration(record.createdAt),
  };
}

function parseExpiration(text: string | undefined, now: number): number | null {
  if (text === undefined) return null;
  const withZone = /(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text}Z`;
  const at = Date.parse(withZone);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || Number.isNaN(at)) {
    throw errors.malformed("'expiration' must be an ISO 8601 date-time");
  }
  if (at <= now) throw errors.malformed("'expiration' must be in the future");
  return at;
}

export async function createManualKey(
  deps: ManualKeyDeps,
  account: string,
  project: string,
  /** The project's incarnation and its roles. */
  settings: { uid: string; roles: readonly string[] },
  input: unknown,
) {
  const body = parseBody(manualKeyBody, input, "key");
  const unknown = body.roles.filter((r) => !settings.roles.includes(r));
  if (unknown.length > 0) throw errors.malformed(`Unknown role(s) for this project: ${unknown.join(", ")}`);
  const now = deps.now();
  const apikey = body.apikey ?? generateKey();
  const record: KeyRecord = {
    id: generateKeyId(),
    kind: "manual",
    account,
    project,
    projectUid: settings.uid,
    name: body.name,
    description: body.description,
    userIdentifier: body.userIdentifier ?? null,
    roles: body.roles,
    globals: body.globals ?? {},
    createdAt: now,
    expiresAt: parseExpiration(body.expiration, now),
    status: "active",
  };
  if (!(await deps.keys.create(hashKey(apikey), record, now, await deps.keyLimit?.(account)))) {
    throw errors.malformed("That key value is already in use; choose another");
  }
  return { ...keyView(record, now), apikey };
}
