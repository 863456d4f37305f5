/**
 * Many independent commands sent together, whatever their keys: on one server (single, sentinel)
 * one pipeline, one round trip; on a Redis Cluster, whose pipelines may not span nodes, each
 * command on its own, all in flight at once. Resolves to each command's reply in order; a command
 * that failed fails the whole call.
 */
import type { RedisClient } from "./clients.ts";

export type BatchCommand = [command: string, ...args: (string | number)[]];

export async function batch(redis: RedisClient, commands: BatchCommand[]): Promise<unknown[]> {
  if (commands.length === 0) return [];
  if (redis.isCluster) return Promise.all(commands.map(([command, ...args]) => redis.call(command, ...args)));
  const results = (await redis.pipeline(commands).exec()) ?? [];
  return results.map(([err, reply]) => {
    if (err) throw err;
    return reply;
  });
}
