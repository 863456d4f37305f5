/**
 * Request rate limits per account and per API key: token buckets in Redis,
 * shared by every replica of both services (one script, one round trip, the
 * server's clock). A bucket holds `limit` tokens and refills at `limit` per
 * window; a request takes one token from each bucket that applies (the
 * account's; the key's when it carries one) — from none when any is empty,
 * and is then refused with 429 and the limit headers of the IETF draft
 * "RateLimit header fields for HTTP" (`RateLimit-Policy`, `RateLimit`), plus
 * `Retry-After`.
 *
 * The limits are the operator's: configuration defaults (RATE_LIMIT_ACCOUNT,
 * RATE_LIMIT_KEY per RATE_LIMIT_WINDOW_SECONDS; 0 = none), the account's plan's
 * `requestsPerWindow` in place of RATE_LIMIT_ACCOUNT, and above both the
 * account's own limits set through the admin API (`rateLimits` of the account
 * record, kept here in Redis next to the account's buckets). Off unless
 * RATE_LIMITS=true.
 */
import { errors } from "../errors.ts";
import { present } from "../present.ts";
import type { RedisClient } from "../redis/clients.ts";
import { rateLimitBucketKey, rateLimitPolicyKey } from "../redis/key-layout.ts";
import { defineScript, type Script } from "../redis/scripts.ts";

export interface RateLimitSettings {
  /** Requests of one account (all its projects and keys, and its logins) per window; 0 = none. */
  account: number;
  /** Requests with one API key per window; 0 = none. */
  key: number;
  windowSeconds: number;
}

/** An account's own limits (the operator's override of the defaults); null = the default. */
export interface AccountRateLimits {
  account: number | null;
  key: number | null;
}

type PolicyName = "account" | "key";

export interface BucketState {
  policy: PolicyName;
  limit: number;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Milliseconds until the bucket holds one token again (0 when it does). */
  untilNextMs: number;
  /** Milliseconds until the bucket is full again. */
  untilFullMs: number;
}

export interface RateLimitVerdict {
  allowed: boolean;
  /** The buckets that apply (none: no limit applies to this request). */
  buckets: BucketState[];
}

/**
 * KEYS: the account's policy (hash: account, key), the account's bucket, the key's bucket (when
 * the request carries a key). ARGV: default account limit, default key limit, window (ms), the
 * plan's account limit ('' when the plan sets none).
 * Answers: allowed (0/1), then per bucket that applies: policy index (1 account, 2 key), limit,
 * whole tokens left, ms until one token, ms until full.
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[3])
local own = redis.call('HMGET', KEYS[1], 'account', 'key')
local limits = { tonumber(own[1]) or tonumber(ARGV[4]) or tonumber(ARGV[1]), tonumber(own[2]) or tonumber(ARGV[2]) }
local state = {}
local allowed = 1
for i = 2, #KEYS do
  local limit = limits[i - 1]
  if limit > 0 then
    local b = redis.call('HMGET', KEYS[i], 'tokens', 'at')
    local tokens = tonumber(b[1])
    local at = tonumber(b[2])
    if tokens == nil or at == nil then
      tokens = limit
      at = now
    end
    tokens = math.min(limit, tokens + math.max(0, now - at) * limit / window)
    state[i] = { limit, tokens }
    if tokens < 1 then allowed = 0 end
  end
end
local out = { allowed }
for i = 2, #KEYS do
  local s = state[i]
  if s then
    local limit = s[1]
    local tokens = s[2]
    if allowed == 1 then tokens = tokens - 1 end
    redis.call('HSET', KEYS[i], 'tokens', tostring(tokens), 'at', tostring(now))
    redis.call('PEXPIRE', KEYS[i], window)
    local untilNext = 0
    if tokens < 1 then untilNext = math.ceil((1 - tokens) * window / limit) end
    table.insert(out, i - 1)
    table.insert(out, limit)
    table.insert(out, math.floor(tokens))
    table.insert(out, untilNext)
    table.insert(out, math.ceil((limit - tokens) * window / limit))
  end
end
return out
`;

const POLICIES: PolicyName[] = ["account", "key"];

export class RequestRateLimiter {
  readonly #prefix: string;
  readonly #settings: RateLimitSettings;
  readonly #take: Script;
  readonly #planLimitOf: (account: string) => Promise<number | null>;

  /** `planLimitOf`: the account's plan's requests per window (null: none; the default applies). */
  constructor(
    redis: RedisClient,
    prefix: string,
    settings: RateLimitSettings,
    planLimitOf: (account: string) => Promise<number | null> = async () => null,
  ) {
    this.#prefix = prefix;
    this.#settings = settings;
    this.#take = defineScript(redis, "rateLimitTake", TAKE);
    this.#planLimitOf = planLimitOf;
  }

  get windowSeconds(): number {
    return this.#settings.windowSeconds;
  }

  /** Takes one token for a request to `account` (with the key `keyId`, if it carries one). */
  async take(account: string, keyId?: string): Promise<RateLimitVerdict> {
    const keys = [
      rateLimitPolicyKey(this.#prefix, account),
      rateLimitBucketKey(this.#prefix, account, "account"),
      ...(keyId === undefined ? [] : [rateLimitBucketKey(this.#prefix, account, `key:${keyId}`)]),
    ];
    const { account: accountLimit, key: keyLimit, windowSeconds } = this.#settings;
    const answer = (await this.#take(
      keys.length,
      ...keys,
      accountLimit,
      keyLimit,
      windowSeconds * 1000,
      String((await this.#planLimitOf(account)) ?? ""),
    )) as number[];
    const buckets: BucketState[] = [];
    /** The answer's `k`-th number (the loop reads only within its length). */
    const at = (k: number) => present(answer[k], "a number of the rate-limit script's answer");
    for (let i = 1; i + 4 < answer.length; i += 5) {
      buckets.push({
        policy: present(POLICIES[at(i) - 1], "the rate-limit policy the script names"),
        limit: at(i + 1),
        remaining: Math.max(0, at(i + 2)),
        untilNextMs: at(i + 3),
        untilFullMs: at(i + 4),
      });
    }
    return { allowed: answer[0] === 1, buckets };
  }
}

/** Each account's own request rate limits, set by the operator (admin API), kept next to its buckets. */
export class AccountRateLimitStore {
  readonly #redis: RedisClient;
  readonly #prefix: string;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  /** The account's own limits (null: the default applies). */
  async get(account: string): Promise<AccountRateLimits> {
    const [accountLimit, keyLimit] = await this.#redis.hmget(
      rateLimitPolicyKey(this.#prefix, account),
      "account",
      "key",
    );
    return { account: toLimit(accountLimit), key: toLimit(keyLimit) };
  }

  /** Sets the account's own limits; null goes back to the default. */
  async set(account: string, limits: AccountRateLimits): Promise<void> {
    const key = rateLimitPolicyKey(this.#prefix, account);
    for (const policy of POLICIES) {
      const value = limits[policy];
      if (value === null) await this.#redis.hdel(key, policy);
      else await this.#redis.hset(key, policy, String(value));
    }
  }

  /** Forgets the account's own limits (the account is deleted: a successor starts with the defaults). */
  async drop(account: string): Promise<void> {
    await this.#redis.del(rateLimitPolicyKey(this.#prefix, account));
  }
}

function toLimit(value: string | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers) for the buckets of a verdict. */
export function rateLimitHeaders(verdict: RateLimitVerdict, windowSeconds: number): Record<string, string> {
  if (verdict.buckets.length === 0) return {};
  return {
    "RateLimit-Policy": verdict.buckets
      .map((b) => `"${b.policy}";q=${b.limit};w=${windowSeconds}`)
      .join(", "),
    RateLimit: verdict.buckets
      .map((b) => `"${b.policy}";r=${b.remaining};t=${Math.ceil(b.untilFullMs / 1000)}`)
      .join(", "),
  };
}

/**
 * Takes a token for the request; throws 429 (`errors.rateLimited`) when a bucket is empty.
 * Answers the limit headers for the response.
 */
export async function admitRequest(
  limiter: RequestRateLimiter,
  account: string,
  keyId?: string,
): Promise<Record<string, string>> {
  const verdict = await limiter.take(account, keyId);
  const headers = rateLimitHeaders(verdict, limiter.windowSeconds);
  if (verdict.allowed) return headers;
  const waitMs = Math.max(...verdict.buckets.map((b) => b.untilNextMs));
  throw errors.rateLimited({ ...headers, "Retry-After": String(Math.max(1, Math.ceil(waitMs / 1000))) });
}
