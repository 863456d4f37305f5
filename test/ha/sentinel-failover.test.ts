/**
 * Redis with Sentinel (a primary, a replica, three sentinels, all real processes): under a
 * steady load of logins and authenticated reads the primary is killed. Requests fail only while
 * the sentinels fail over (the gap is printed), logins and reads succeed after it, and every key
 * revocation acknowledged before the kill is still refused after it (revocations wait for the
 * replica).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { type Platform, startPlatform } from "../support/platform.ts";
import { type SentinelProcesses, startRedisSentinel } from "../support/redis-topologies.ts";
import { describeReport, loadThroughFailover } from "./failover-load.ts";

describe("Redis Sentinel: failover under load", function () {
  this.timeout(120_000);
  let dir: string;
  let redis: SentinelProcesses;
  let platform: Platform;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-sentinel-"));
    redis = await startRedisSentinel(dir);
    platform = await startPlatform({
      REDIS_MODE: "sentinel",
      REDIS_SENTINELS: redis.sentinelAddresses.join(","),
      REDIS_SENTINEL_MASTER: redis.master,
    });
  });
  after(async () => {
    await platform?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("fails requests only during the failover; revocations acknowledged before it hold after it", async () => {
    const report = await loadThroughFailover(platform, () => redis.primary.kill());
    console.log(`      ${describeReport("Sentinel", report)}`);
    expect(await redis.currentPrimary()).to.equal(redis.replica.address);
  });
});
