/**
 * API key values: a recognisable prefix and 192 random bits. Only a SHA-256 hash
 * of a key is ever stored (the key has full entropy, so a fast hash is the right
 * tool: argon2 is for low-entropy passwords).
 */
import { hash, randomBytes } from "node:crypto";

export const KEY_PREFIX = "tsk_";

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(24).toString("base64url");
}

/** A generated key's value wherever it stands in a text (the prefix, then at least 16 of its characters). */
const GENERATED_KEY = new RegExp(`${KEY_PREFIX}[A-Za-z0-9_-]{16,}`, "g");

/**
 * The text with every generated key's value in it replaced: what goes into a log
 * line or an audit entry (a key pasted where an id or a name belongs).
 */
export function redactKeys(text: string): string {
  return text.replace(GENERATED_KEY, `${KEY_PREFIX}[redacted]`);
}

export function hashKey(key: string): string {
  return hash("sha256", key, "hex");
}

/** Operator-chosen manual key values: no colon (it separates the key from its second part). */
export const MANUAL_KEY_PATTERN = /^[A-Za-z0-9_.~+/=-]{8,200}$/;

/** Random identifier for key records in admin listings (never derived from the key). */
export function generateKeyId(): string {
  return randomBytes(9).toString("base64url");
}
