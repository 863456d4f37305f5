/**
 * Brute-force defence (OWASP): failed logins are counted per
 * account + project + username; from the N-th failure on, that username is
 * locked for an exponentially growing time up to a cap; a success clears it.
 * A per-client-address ceiling per hour is a second, higher line.
 */
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

export interface ThrottleSettings {
  failuresBeforeLockout: number;
  baseSeconds: number;
  maxSeconds: number;
  perAddressPerHour: number;
}

// KEYS[1] user counter; ARGV: now ms, threshold, base s, max s
const RECORD_FAILURE = `
local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
local threshold = tonumber(ARGV[2])
if count >= threshold then
  local wait = tonumber(ARGV[3]) * (2 ^ (count - threshold))
  if wait > tonumber(ARGV[4]) then wait = tonumber(ARGV[4]) end
  redis.call('HSET', KEYS[1], 'until', tonumber(ARGV[1]) + wait * 1000)
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]) + 3600)
return count`;

export class LoginThrottle {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #settings: ThrottleSettings;

  constructor(redis: Redis, prefix: string, settings: ThrottleSettings) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#settings = settings;
  }

  #userKey(account: string, project: string, username: string): string {
    const user = createHash("sha256").update(username).digest("hex").slice(0, 32);
    return `${this.#prefix}loginfail:${account}/${project}/${user}`;
  }

  #addressKey(address: string, now: number): string {
    return `${this.#prefix}loginaddr:${address}:${Math.floor(now / 3_600_000)}`;
  }

  /** Seconds the caller must wait, or 0 when the attempt may go ahead. One round trip. */
  async retryAfter(
    account: string,
    project: string,
    username: string,
    address: string,
    now: number,
  ): Promise<number> {
    const [[, lockedUntil], [, addressFailures]] = (await this.#redis
      .pipeline()
      .hget(this.#userKey(account, project, username), "until")
      .get(this.#addressKey(address, now))
      .exec()) as [[unknown, string | null], [unknown, string | null]];
    if (Number(addressFailures ?? 0) >= this.#settings.perAddressPerHour) {
      return Math.ceil((3_600_000 - (now % 3_600_000)) / 1000);
    }
    const until = Number(lockedUntil ?? 0);
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }

  async recordFailure(
    account: string,
    project: string,
    username: string,
    address: string,
    now: number,
  ): Promise<void> {
    const s = this.#settings;
    const addressKey = this.#addressKey(address, now);
    await this.#redis
      .pipeline()
      .eval(
        RECORD_FAILURE,
        1,
        this.#userKey(account, project, username),
        now,
        s.failuresBeforeLockout,
        s.baseSeconds,
        s.maxSeconds,
      )
      .incr(addressKey)
      .expire(addressKey, 3600)
      .exec();
  }

  async recordSuccess(account: string, project: string, username: string): Promise<void> {
    await this.#redis.del(this.#userKey(account, project, username));
  }
}
