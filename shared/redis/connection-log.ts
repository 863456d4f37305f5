/** Connection errors of Redis clients are logged (once per kind of failure burst) instead of thrown at nobody. */

import type { Logger } from "../logger.ts";
import type { RedisClient } from "./clients.ts";

export function reportRedisErrors(
  redis: RedisClient,
  logger: Logger,
  name: string,
  onError?: () => void,
): void {
  let last = "";
  redis.on("error", (err: Error) => {
    onError?.();
    if (err.message !== last) logger.warn({ store: name, error: err.message }, "redis connection error");
    last = err.message;
  });
  redis.on("ready", () => {
    last = "";
  });
}
