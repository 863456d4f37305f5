/**
 * Real stores for integration tests: one FerretDB (or MONGO_URL) and one Redis
 * (REDIS_URL, the local 6379, or a redis-server we start) per test process.
 * With TEST_REDIS=cluster the Redis is a Redis Cluster of three primaries and
 * three replicas started here (`make test-ha` runs the Redis suites so).
 * Every caller gets its own isolation prefix: use it for database names and
 * Redis key prefixes so tests never touch a running `make run`.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Cluster } from "ioredis";
import {
  findOrStartMongo,
  findOrStartRedis,
  type StartedStore,
} from "../../services/dev-stack/src/stores.ts";
import { createRedisClient, type RedisClient, type RedisTopology } from "../../shared/redis/clients.ts";
import { startRedisCluster } from "./redis-topologies.ts";

export interface TestStores {
  mongoUrl: string;
  /** The Redis settings of the services under test (REDIS_MODE and what that mode needs). */
  redisEnv: Record<string, string>;
  redis: RedisTopology;
}

let started: Promise<{ stores: TestStores; stoppers: StartedStore[]; dir: string }> | undefined;

async function testRedis(dir: string): Promise<{ env: Record<string, string>; stopper: StartedStore }> {
  if (process.env.TEST_REDIS === "cluster") {
    const cluster = await startRedisCluster(path.join(dir, "redis-cluster"));
    const env = { REDIS_MODE: "cluster", REDIS_CLUSTER_NODES: cluster.nodes.join(",") };
    return { env, stopper: { url: "", stop: () => cluster.stop() } };
  }
  const redis = await findOrStartRedis(process.env, dir);
  return { env: { REDIS_MODE: "single", REDIS_URL: redis.url }, stopper: redis };
}

export function testStores(): Promise<TestStores> {
  started ??= (async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-test-"));
    const mongo = await findOrStartMongo(process.env, dir, () => {});
    const redis = await testRedis(dir);
    const topology: RedisTopology = {
      REDIS_MODE: redis.env.REDIS_MODE as RedisTopology["REDIS_MODE"],
      REDIS_URL: redis.env.REDIS_URL ?? "redis://127.0.0.1:6379/",
      REDIS_CLUSTER_NODES: redis.env.REDIS_CLUSTER_NODES?.split(","),
      REDIS_TLS: false,
    };
    return {
      stores: { mongoUrl: mongo.url, redisEnv: redis.env, redis: topology },
      stoppers: [mongo, redis.stopper],
      dir,
    };
  })();
  return started.then((s) => s.stores);
}

/** A client of the test Redis (whatever its topology), for tests that look at keys directly. */
export async function testRedisClient(): Promise<RedisClient> {
  const client = createRedisClient((await testStores()).redis);
  // A test's client may still be open when the stores stop at the end of the run.
  client.on("error", () => {});
  return client;
}

/** Every key matching `pattern` (on a Cluster: on every primary). */
export async function keysMatching(redis: RedisClient, pattern: string): Promise<string[]> {
  if (!(redis instanceof Cluster)) return redis.keys(pattern);
  // Until the slot map is known every seed node counts as a primary.
  if (redis.status !== "ready") await new Promise((resolve) => redis.once("ready", resolve));
  const perNode = await Promise.all(redis.nodes("master").map((node) => node.keys(pattern)));
  return [...new Set(perNode.flat())].sort();
}

/** Deletes keys one by one (on a Cluster they need not share a slot). */
export async function deleteKeys(redis: RedisClient, keys: string[]): Promise<void> {
  await Promise.all(keys.map((key) => redis.del(key)));
}

/** A fresh prefix such as `t3f9a1c_`: lower-case, safe in database names and Redis keys. */
export function isolationPrefix(): string {
  return `t${randomBytes(3).toString("hex")}_`;
}

export async function stopTestStores(): Promise<void> {
  if (!started) return;
  const s = await started;
  started = undefined;
  await Promise.all(s.stoppers.map((x) => x.stop()));
  rmSync(s.dir, { recursive: true, force: true });
}
