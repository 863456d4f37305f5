/**
 * Counts the Redis round trips of an operation: a MONITOR connection records
 * every command a client sends that names a key under `prefix` (commands run
 * inside Lua scripts are not round trips and are left out), except those whose
 * keys all belong to background work named by `background` (key prefixes after
 * `prefix`, e.g. the usage meter's periodic flush, which may fall inside the
 * operation's window but is not part of it).
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

export class RedisCommandRecorder {
  readonly #client: Redis;
  readonly #monitor: Redis;
  readonly #prefix: string;
  #seen: string[][] = [];

  private constructor(client: Redis, monitor: Redis, prefix: string, background: string[]) {
    this.#client = client;
    this.#monitor = monitor;
    this.#prefix = prefix;
    const isBackground = (key: string) => background.some((part) => key.startsWith(`${prefix}${part}`));
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      const keys = args.slice(1).filter((a) => a.includes(prefix));
      if (source !== "lua" && keys.length > 0 && !keys.every(isBackground)) this.#seen.push(args);
    });
  }

  static async start(
    redisUrl: string,
    prefix: string,
    background: string[] = [],
  ): Promise<RedisCommandRecorder> {
    const client = new Redis(redisUrl);
    return new RedisCommandRecorder(client, await client.monitor(), prefix, background);
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
