/**
 * Many independent commands sent together, whatever their keys, in groups whose keys share one
 * hash slot (a group may be a single command): on one server (single, sentinel) all in one
 * pipeline, one write and one round trip; on a Redis Cluster, whose pipelines may not span nodes,
 * one pipeline per group, all in flight at once. Resolves to each group's replies in order, a
 * command that failed as its Error (the others still apply).
 */
import type { ChainableCommander } from "ioredis";
import type { RedisClient } from "./clients.ts";

export type BatchCommand = [command: string, ...args: (string | number)[]];

type Reply = unknown;

async function run(pipeline: ChainableCommander): Promise<Reply[]> {
  const results = (await pipeline.exec()) ?? [];
  return results.map(([err, reply]) => err ?? reply);
}

export async function batch(redis: RedisClient, groups: BatchCommand[][]): Promise<Reply[][]> {
  if (groups.length === 0) return [];
  if (redis.isCluster) return Promise.all(groups.map((group) => run(redis.pipeline(group))));
  const replies = await run(redis.pipeline(groups.flat()));
  let at = 0;
  return groups.map((group) => {
    const own = replies.slice(at, at + group.length);
    at += group.length;
    return own;
  });
}

/** The group's replies, or the first error among them thrown. */
export function repliesOf(group: Reply[]): Reply[] {
  const failed = group.find((reply) => reply instanceof Error);
  if (failed) throw failed;
  return group;
}
