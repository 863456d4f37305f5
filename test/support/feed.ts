/** Reading a platform's change feed (docs/realtime.md) straight from Redis. */
import { expect } from "chai";
import { type FeedEvent, parseFeedEntry } from "../../services/data/src/store/change-feed.ts";
import type { RedisClient } from "../../shared/redis/clients.ts";
import { keysMatching } from "./stores.ts";

/** Every event of the streams under `redisPrefix` (one project here), oldest first. */
export async function feedEvents(redis: RedisClient, redisPrefix: string): Promise<FeedEvent[]> {
  const streams = await keysMatching(redis, `${redisPrefix}feed:*`);
  expect(streams.length, "one project, one stream").to.be.at.most(1);
  if (streams.length === 0) return [];
  const entries = await redis.xrange(streams[0]!, "-", "+");
  return entries.map(([id, flat]) => parseFeedEntry(id, flat)!);
}
