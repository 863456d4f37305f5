/** Everything a platform keeps in Redis as text (names and values), to check what is never stored. */
import type { RedisClient } from "../../shared/redis/clients.ts";
import { keysMatching } from "./stores.ts";

export async function redisDump(
  redis: RedisClient,
  prefix: string,
): Promise<{ names: string[]; values: string[] }> {
  const names = await keysMatching(redis, `${prefix}*`);
  const values = await Promise.all(
    names.map(async (n) => {
      const type = await redis.type(n);
      return type === "hash"
        ? JSON.stringify(await redis.hgetall(n))
        : type === "string"
          ? ((await redis.get(n)) ?? "")
          : "";
    }),
  );
  return { names, values };
}
