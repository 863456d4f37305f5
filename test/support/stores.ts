/**
 * Real stores for integration tests: one FerretDB (or MONGO_URL) and one Redis
 * (REDIS_URL, the local 6379, or a redis-server we start) per test process.
 * Every caller gets its own isolation prefix: use it for database names and
 * Redis key prefixes so tests never touch a running `make run`.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { findOrStartMongo, findOrStartRedis, type StartedStore } from "../../services/gateway/src/stores.ts";

export interface TestStores {
  mongoUrl: string;
  redisUrl: string;
}

let started: Promise<{ stores: TestStores; stoppers: StartedStore[]; dir: string }> | undefined;

export function testStores(): Promise<TestStores> {
  started ??= (async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-test-"));
    const mongo = await findOrStartMongo(process.env, dir, () => {});
    const redis = await findOrStartRedis(process.env, dir);
    return { stores: { mongoUrl: mongo.url, redisUrl: redis.url }, stoppers: [mongo, redis], dir };
  })();
  return started.then((s) => s.stores);
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
