/**
 * Short leases in Redis that serialise changes of one thing across every
 * data-service process: a project's definition (check the revision, then
 * write), an account's set of administrators (check the last admin, then
 * write). MongoDB-wire servers without atomic guarded updates (FerretDB) would
 * otherwise let two such check-then-write sequences interleave. A lease expires
 * by itself when its holder dies; it is held far longer than the work takes.
 */
import { randomBytes } from "node:crypto";
import { ApiError, ErrorCode } from "../../../../shared/errors.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { leaseKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";
import { backoffMs, sleep } from "./retry-policy.ts";

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export interface LeaseSettings {
  /** How long a lease lasts unless released. */
  holdMs: number;
  /** How long to wait for a lease held by another request. */
  waitMs: number;
}

export class Leases {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #settings: LeaseSettings;
  readonly #release: Script;

  constructor(redis: RedisClient, prefix: string, settings: LeaseSettings) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#settings = settings;
    this.#release = defineScript(redis, "leaseRelease", RELEASE);
  }

  /** Runs `work` holding the lease `name`; 503/5031 when it stays taken longer than the wait. */
  async hold<T>(name: string, work: () => Promise<T>): Promise<T> {
    const key = leaseKey(this.#prefix, name);
    const token = randomBytes(12).toString("hex");
    const deadline = Date.now() + this.#settings.waitMs;
    for (let attempt = 1; ; attempt++) {
      if ((await this.#redis.set(key, token, "PX", this.#settings.holdMs, "NX")) === "OK") break;
      if (Date.now() >= deadline) {
        throw new ApiError(
          503,
          ErrorCode.unavailable,
          "Another change of the same thing is still under way; nothing was written, try again",
          { headers: { "Retry-After": "1" } },
        );
      }
      await sleep(backoffMs(attempt));
    }
    try {
      return await work();
    } finally {
      await this.#release(1, key, token).catch(() => {});
    }
  }
}
