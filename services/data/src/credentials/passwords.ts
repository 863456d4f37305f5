/**
 * Built-in users' passwords: argon2id at OWASP's minimum (19 MiB, t=2, p=1) by
 * default. Unknown users are verified against a dummy hash so a failed login
 * costs the same whether or not the user exists. Hashes imported from Live API
 * Creator (lac-passwords.ts) verify too, and ask to be replaced by argon2id
 * (`needsRehash`); a failed check of one costs a dummy verification as well.
 */
import argon2 from "argon2";
import { isLacPasswordRecord, NO_PASSWORD, verifyLacPassword } from "./lac-passwords.ts";

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  /** Spends the same time as a real verification, always false. */
  verifyAgainstDummy(password: string): Promise<false>;
  /** null when acceptable, else the reason. */
  policyProblem(password: string): string | null;
  /** Whether a hash that verified should be replaced by a new argon2id one (an imported hash). */
  needsRehash(hash: string): boolean;
}

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

export function createPasswordHasher(memoryKib: number): PasswordHasher {
  const options = { type: argon2.argon2id, memoryCost: memoryKib, timeCost: 2, parallelism: 1 } as const;
  let dummy: Promise<string> | undefined;
  const verifyAgainstDummy = async (password: string): Promise<false> => {
    dummy ??= argon2.hash("tessera-dummy-password", options);
    await argon2.verify(await dummy, password).catch(() => false);
    return false;
  };
  return {
    hash: (password) => argon2.hash(password, options),
    async verify(hash, password) {
      if (isLacPasswordRecord(hash) || hash === NO_PASSWORD) {
        if (hash !== NO_PASSWORD && verifyLacPassword(hash, password)) return true;
        return verifyAgainstDummy(password);
      }
      try {
        return await argon2.verify(hash, password);
      } catch {
        return false;
      }
    },
    verifyAgainstDummy,
    needsRehash: (hash) => isLacPasswordRecord(hash),
    policyProblem(password) {
      if (password.length < PASSWORD_MIN_LENGTH)
        return `the password must have at least ${PASSWORD_MIN_LENGTH} characters`;
      if (password.length > PASSWORD_MAX_LENGTH)
        return `the password must have at most ${PASSWORD_MAX_LENGTH} characters`;
      return null;
    },
  };
}
