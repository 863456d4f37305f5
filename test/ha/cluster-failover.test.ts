/**
 * Redis Cluster (three primaries, three replicas, real processes): under a steady load of
 * logins and authenticated reads one primary is killed. Requests touching its slots fail only
 * until its replica takes over (the gap is printed), everything succeeds after it, and every key
 * revocation acknowledged before the kill is still refused after it (a revocation waits for the
 * replica of the primary owning the key's slot).
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { type Platform, startPlatform } from "../support/platform.ts";
import { type RedisClusterProcesses, startRedisCluster } from "../support/redis-topologies.ts";
import { describeReport, loadThroughFailover } from "./failover-load.ts";

describe("Redis Cluster: failover of a primary under load", function () {
  this.timeout(120_000);
  let dir: string;
  let cluster: RedisClusterProcesses;
  let platform: Platform;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-cluster-"));
    cluster = await startRedisCluster(dir);
    platform = await startPlatform({ REDIS_MODE: "cluster", REDIS_CLUSTER_NODES: cluster.nodes.join(",") });
  });
  after(async () => {
    await platform?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("fails requests only until a replica takes over; revocations acknowledged before it hold after it", async () => {
    const [victim] = cluster.servers.filter((_, i) => i === 0);
    expect(await cluster.role(victim!.address)).to.equal("master");
    const report = await loadThroughFailover(platform, () => victim!.kill());
    console.log(`      ${describeReport("Cluster", report)}`);
    const roles = await Promise.all(cluster.nodes.slice(1).map((a) => cluster.role(a)));
    expect(roles.filter((r) => r === "master").length, "a replica was promoted").to.equal(3);
  });
});
