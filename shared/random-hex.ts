/**
 * Random ids as hex text, from the system's CSPRNG like crypto.randomBytes, but drawn from a pool
 * that one call fills for many ids (crypto.randomUUID does the same): a call into OpenSSL per id
 * costs a few microseconds on every write request's path. Each byte of the pool is handed out once.
 */
import { randomBytes, randomFillSync } from "node:crypto";

const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let next = POOL_BYTES;

/** `bytes` random bytes as hex (2 × `bytes` characters). */
export function randomHex(bytes: number): string {
  if (bytes > POOL_BYTES / 4) return randomBytes(bytes).toString("hex");
  if (next + bytes > POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  const text = pool.toString("hex", next, next + bytes);
  next += bytes;
  return text;
}
