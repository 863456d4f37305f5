/**
 * Which account a login is an attempt at: the lock-out counts failures per
 * identity, so it must read the credential the provider really uses, not
 * whatever field happens to be called `username`.
 *
 * The identity fields are, in order: the project's declared
 * `authentication.identityFields` (the built-in provider: `username`); else the
 * fields of the provider's login form that are not passwords; else none, and
 * the identity is the whole credential set.
 */
import type { LoginInfoResponse } from "../../../../shared/contracts/internal-api.ts";

/** The login form's fields that are not of type `password`, or undefined when there are none. */
export function identityFieldsOfLoginForm(info: LoginInfoResponse): string[] | undefined {
  const fields = info.fields.filter((f) => f.type.toLowerCase() !== "password").map((f) => f.name);
  return fields.length > 0 ? fields : undefined;
}

/** Letter case, surrounding blanks and Unicode compatibility forms do not make another identity. */
function normalized(value: unknown): unknown {
  return typeof value === "string" ? value.normalize("NFKC").trim().toLowerCase() : (value ?? null);
}

/** JSON with object keys sorted, so that equal credential sets give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The identity a login body names, given the identity fields (undefined: the whole body is the identity). */
export function loginIdentity(
  payload: Record<string, unknown>,
  fields: readonly string[] | undefined,
): string {
  if (!fields) return `all:${canonicalJson(payload)}`;
  return `fields:${canonicalJson(fields.map((f) => normalized(Object.hasOwn(payload, f) ? payload[f] : undefined)))}`;
}
