/**
 * Counts the Redis round trips of an operation: a MONITOR connection records
 * every command a client sends that names a key under `prefix` (commands run
 * inside Lua scripts are not round trips and are left out).
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

export class RedisCommandRecorder {
  readonly #client: Redis;
  readonly #monitor: Redis;
  readonly #prefix: string;
  #seen: string[][] = [];

  private constructor(client: Redis, monitor: Redis, prefix: string) {
    this.#client = client;
    this.#monitor = monitor;
    this.#prefix = prefix;
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source !== "lua" && args.slice(1).some((a) => a.includes(prefix))) this.#seen.push(args);
    });
  }

  static async start(redisUrl: string, prefix: string): Promise<RedisCommandRecorder> {
    const client = new Redis(redisUrl);
    return new RedisCommandRecorder(client, await client.monitor(), prefix);
  }

  /** Runs `operation`; resolves to the names of the commands it sent, lower-cased, in order. */
  async record(operation: () => Promise<unknown>): Promise<string[]> {
    this.#seen = [];
    await operation();
    // MONITOR is asynchronous: wait until it has shown a marker command sent after the operation.
    const marker = `${this.#prefix}marker:${randomBytes(4).toString("hex")}`;
    await this.#client.exists(marker);
    for (let i = 0; i < 200 && !this.#seen.some((args) => args.includes(marker)); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.#seen.filter((args) => !args.includes(marker)).map((args) => args[0]!.toLowerCase());
  }

  async close(): Promise<void> {
    this.#monitor.disconnect();
    await this.#client.quit();
  }
}
