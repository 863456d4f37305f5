/**
 * The accounts whose storage may have changed since the last storage round (storage-sampler.ts),
 * in Redis so that every data-service process's writes reach whichever process makes the round:
 * the meter marks the accounts it saw write (usage-meter.ts) at each flush; a round takes them all
 * at once and, when it ends, gives back those it could not measure. A round that never ends (its
 * process stopped) leaves what it took to the next one.
 */
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { usageRoundsKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";

// KEYS: changed, taken. Moves every changed account to taken (with what an unfinished round left) and answers taken.
const TAKE = `
redis.call('SUNIONSTORE', KEYS[2], KEYS[2], KEYS[1])
redis.call('DEL', KEYS[1])
return redis.call('SMEMBERS', KEYS[2])`;

// KEYS: changed, taken; ARGV: accounts not measured. Ends the round: taken is emptied, those given back.
const DONE = `
redis.call('DEL', KEYS[2])
if #ARGV > 0 then redis.call('SADD', KEYS[1], unpack(ARGV)) end
return 1`;

export class ChangedAccounts {
  readonly #redis: RedisClient;
  readonly #changed: string;
  readonly #taken: string;
  readonly #take: Script;
  readonly #done: Script;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#changed = usageRoundsKey(prefix, "changed");
    this.#taken = usageRoundsKey(prefix, "taken");
    this.#take = defineScript(redis, "usage_changed_take", TAKE);
    this.#done = defineScript(redis, "usage_changed_done", DONE);
  }

  /** The accounts wrote (their storage is measured at the next round). */
  async mark(accounts: Iterable<string>): Promise<void> {
    const list = [...accounts];
    if (list.length > 0) await this.#redis.sadd(this.#changed, ...list);
  }

  /** Every account marked since the last round took them (and what an unfinished round took). */
  async take(): Promise<string[]> {
    return (await this.#take(2, this.#changed, this.#taken)) as string[];
  }

  /** The round ended; `unmeasured` are marked again for the next. */
  async done(unmeasured: string[]): Promise<void> {
    await this.#done(2, this.#changed, this.#taken, ...unmeasured);
  }
}
