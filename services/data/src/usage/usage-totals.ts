/**
 * What the storage rounds' Prometheus gauges say of all accounts together — the bytes they store
 * and how many are at 80 % (warning) or 100 % (full) of each limit — kept in Redis and brought up
 * to date account by account as each is measured, so that a round that measures only the accounts
 * that changed still reports all of them, and reading them costs the same for any number of
 * accounts.
 */
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { usageRoundsKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";

// KEYS: bytes, states, counts, total; ARGV: account, bytes ('' when the account is gone), states
// (its `limit|state` pairs joined by ','). Replaces the account's part of the totals.
const RECORD = `
local account = ARGV[1]
local old = tonumber(redis.call('HGET', KEYS[1], account) or '0')
local new = tonumber(ARGV[2] == '' and '0' or ARGV[2])
redis.call('INCRBY', KEYS[4], new - old)
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], account) else redis.call('HSET', KEYS[1], account, ARGV[2]) end
local before = redis.call('HGET', KEYS[2], account) or ''
if before == ARGV[3] then return 1 end
for state in string.gmatch(before, '[^,]+') do redis.call('HINCRBY', KEYS[3], state, -1) end
for state in string.gmatch(ARGV[3], '[^,]+') do redis.call('HINCRBY', KEYS[3], state, 1) end
if ARGV[3] == '' then redis.call('HDEL', KEYS[2], account) else redis.call('HSET', KEYS[2], account, ARGV[3]) end
return 1`;

export interface Totals {
  bytes: number;
  /** Accounts by `limit|state`. */
  states: Map<string, number>;
}

export class UsageTotals {
  readonly #redis: RedisClient;
  readonly #keys: string[];
  readonly #record: Script;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#keys = (["bytes", "states", "counts", "total"] as const).map((part) =>
      usageRoundsKey(prefix, part),
    );
    this.#record = defineScript(redis, "usage_totals_record", RECORD);
  }

  /** The account as just measured: its bytes and its `limit|state` pairs. */
  async record(account: string, bytes: number, states: Iterable<string>): Promise<void> {
    const joined = [...new Set(states)].sort().join(",");
    await this.#record(4, ...this.#keys, account, String(Math.round(bytes)), joined);
  }

  /** The account is gone: it leaves the totals. */
  async drop(account: string): Promise<void> {
    await this.#record(4, ...this.#keys, account, "", "");
  }

  async read(): Promise<Totals> {
    const [, , counts, total] = this.#keys as [string, string, string, string];
    const [bytes, states] = await Promise.all([this.#redis.get(total), this.#redis.hgetall(counts)]);
    return {
      bytes: Number(bytes ?? 0),
      states: new Map(Object.entries(states).map(([state, n]) => [state, Number(n)])),
    };
  }
}
