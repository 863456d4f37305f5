/**
 * Reads the API key from a request (docs/contract.md §1, docs/authentication.md): `Authorization: <Scheme> <key>:1`
 * for a configured scheme, or `?auth=<key>:1` on GET only. The part after the first
 * colon is reserved and ignored.
 */
import { errors } from "../errors.ts";

export interface KeyCarrier {
  method: string;
  authorization: string | undefined;
  /** Every value of the `auth` query parameter. */
  authParams: string[];
}

const MAX_KEY_LENGTH = 512;

function keyPart(raw: string): string {
  const colon = raw.indexOf(":");
  const key = (colon < 0 ? raw : raw.slice(0, colon)).trim();
  if (!key || key.length > MAX_KEY_LENGTH || /\s/.test(key)) throw errors.noKey("The API key cannot be read");
  return key;
}

/** Returns the key, undefined when none was sent, or throws 401/4011 when one was sent but cannot be read. */
export function readKey(carrier: KeyCarrier, schemes: readonly string[]): string | undefined {
  if (carrier.authorization !== undefined) {
    const match = /^\s*(\S+)\s+(\S.*?)\s*$/.exec(carrier.authorization);
    const scheme = match?.[1];
    if (!match || !scheme || !schemes.some((s) => s.toLowerCase() === scheme.toLowerCase())) {
      throw errors.noKey(
        `The Authorization header must read '<scheme> <key>:1' with scheme ${schemes.join(", ")}`,
      );
    }
    return keyPart(match[2] ?? "");
  }
  const [param] = carrier.authParams;
  if (carrier.method === "GET" && param !== undefined) {
    if (carrier.authParams.length > 1) throw errors.noKey("Only one auth parameter may be given");
    return keyPart(param);
  }
  return undefined;
}
