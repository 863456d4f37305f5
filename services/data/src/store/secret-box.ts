/**
 * Secrets the platform must be able to read back (a webhook subscription's signing secret) are
 * kept sealed: AES-256-GCM under the operator's SECRETS_KEY, so that whoever reads the store
 * (Redis, a backup of it) does not read them. A sealed value names the key that sealed it (an id
 * derived from the key, never the key), so the operator can add a new key in front of the old one
 * and values sealed under either open; `reseal` moves a value to the current key. Without a key,
 * values are kept as they are, and a value kept as it is (e.g. stored before SECRETS_KEY was set)
 * opens as itself.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const PREFIX = "tsealed1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A key's public name: the first 8 bytes of a hash of it, hex. */
function keyId(key: Buffer): string {
  return createHash("sha256").update("tessera secrets key id\0").update(key).digest("hex").slice(0, 16);
}

export class SecretBoxError extends Error {}

/** Whether a stored value is a sealed one (else it is kept as it is). */
export function isSealed(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(`${PREFIX}:`);
}

export class SecretBox {
  readonly #keys: Map<string, Buffer>;
  readonly #sealing: { id: string; key: Buffer } | undefined;

  /** `keys`: 32 bytes each, the first one seals; none: values are kept as they are. */
  constructor(keys: readonly Buffer[]) {
    for (const key of keys) if (key.length !== 32) throw new SecretBoxError("A secrets key must be 32 bytes");
    this.#keys = new Map(keys.map((key) => [keyId(key), key]));
    const first = keys[0];
    this.#sealing = first && { id: keyId(first), key: first };
  }

  /** Whether values are sealed (a key is configured). */
  get seals(): boolean {
    return this.#sealing !== undefined;
  }

  /** Whether `stored` is sealed under the current key. */
  sealsCurrent(stored: string): boolean {
    return this.#sealing !== undefined && stored.startsWith(`${PREFIX}:${this.#sealing.id}:`);
  }

  seal(plain: string): string {
    if (!this.#sealing) return plain;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#sealing.key, iv);
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}:${this.#sealing.id}:${Buffer.concat([iv, sealed]).toString("base64url")}`;
  }

  /**
   * `stored` sealed under the current key when it is not (kept as it is, or sealed under an older
   * key); undefined when it is, or when there is no key. SecretBoxError when it does not open.
   */
  reseal(stored: string): string | undefined {
    if (!this.#sealing || this.sealsCurrent(stored)) return undefined;
    return this.seal(this.open(stored));
  }

  /** The plain value; SecretBoxError when it was sealed under a key not configured, or altered. */
  open(stored: string): string {
    if (!isSealed(stored)) return stored;
    const [, id = "", data = ""] = stored.split(":");
    const key = this.#keys.get(id);
    if (!key)
      throw new SecretBoxError(`sealed under a SECRETS_KEY not configured here (key id ${id.slice(0, 16)})`);
    const bytes = Buffer.from(data, "base64url");
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError("a sealed value too short to open");
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      throw new SecretBoxError("a sealed value that does not open: altered, or sealed under another key");
    }
  }
}
