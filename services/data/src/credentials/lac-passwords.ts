/**
 * Passwords of users imported from Live API Creator. LAC kept a user's password
 * as `password_hash` = base64(SHA-512(salt bytes ‖ password as UTF-8)) with a
 * random `password_salt` (base64): the users of the admin CLI's sample exports
 * verify this way against their documented password. Tessera keeps such a hash
 * as `$lac-sha512$<salt>$<hash>` until the user's first login, which verifies it
 * (in constant time) and replaces it with an argon2id hash (passwords.ts).
 * A user imported without a hash gets `NO_PASSWORD`, which no password matches.
 */
import { createHash, timingSafeEqual } from "node:crypto";

const PREFIX = "$lac-sha512$";
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The stored form of a user who has no usable password (an administrator sets one). */
export const NO_PASSWORD = "!no-password";

/** LAC's hash and salt as a stored password hash, or undefined when they are not LAC's shape. */
export function lacPasswordRecord(hash: string, salt: string): string | undefined {
  if (!BASE64.test(hash) || !BASE64.test(salt)) return undefined;
  if (Buffer.from(hash, "base64").length !== 64 || Buffer.from(salt, "base64").length === 0) return undefined;
  return `${PREFIX}${salt}$${hash}`;
}

export function isLacPasswordRecord(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** Whether `password` is the one a LAC record was made from (false for a malformed record). */
export function verifyLacPassword(stored: string, password: string): boolean {
  const [salt, hash] = stored.slice(PREFIX.length).split("$");
  if (!salt || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const actual = createHash("sha512")
    .update(Buffer.concat([Buffer.from(salt, "base64"), Buffer.from(password, "utf8")]))
    .digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
