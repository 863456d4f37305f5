/**
 * The change feed across a Redis Sentinel failover (a primary, a replica, three sentinels, all
 * real processes): writers post rows in a burst, the primary is killed in the middle of it, the
 * sentinels promote the replica, the writers go on. Afterwards — once recovery has settled every
 * write intent — every write acknowledged to its client (201) must have its event in the project's
 * feed and its row in the store. The test counts and prints what it finds: acknowledged writes
 * without an event ("lost events"), acknowledged rows that are gone ("lost rows"), and events of
 * writes whose client saw a failure (allowed: the write committed, its answer was lost).
 *
 * Redis replicates asynchronously: a step the old primary acknowledged but had not yet sent to the
 * replica is gone after the failover. The write path closes that window by waiting for a replica
 * (WAIT) after the step that finishes the write (docs/realtime.md, "Failover").
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { WriteIntents } from "../../services/data/src/store/write-intents.ts";
import { createRedisClient, type RedisClient } from "../../shared/redis/clients.ts";
import { demoProject } from "../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../support/http.ts";
import { type Platform, startPlatform } from "../support/platform.ts";
import {
  replicaThroughRelay,
  type SentinelProcesses,
  startRedisSentinel,
} from "../support/redis-topologies.ts";
import { until } from "../support/until.ts";

const WRITERS = 8;
const BEFORE_KILL_MS = 1500;
const SETTLE_MS = 2000;
/** How long the replica's link stalls before the primary dies (shorter than FEED_REPLICA_WAIT_MS). */
const STALL_MS = 300;

interface Write {
  name: string;
  startedAt: number;
  endedAt: number;
  status: number;
}

describe("Redis Sentinel: the change feed across a failover during a burst of writes", function () {
  this.timeout(180_000);
  let dir: string;
  let redis: SentinelProcesses;
  let platform: Platform;
  let client: RedisClient;

  // Each case kills a primary: each gets a topology and a platform of its own.
  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-feed-failover-"));
    redis = await startRedisSentinel(dir);
    platform = await startPlatform({
      REDIS_MODE: "sentinel",
      REDIS_SENTINELS: redis.sentinelAddresses.join(","),
      REDIS_SENTINEL_MASTER: redis.master,
      // Intents a failover leaves behind are settled within seconds, not the default 15 s.
      WRITE_LEASE_MS: "1000",
      WRITE_UNDO_WINDOW_MS: "2000",
      WRITE_RECOVERY_INTERVAL_MS: "200",
    });
    client = createRedisClient(platform.dataConfig);
    client.on("error", () => {}); // reconnecting through the failover, and at the end
  });
  afterEach(async () => {
    client?.disconnect();
    await platform?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The writes of a burst, the primary killed in the middle of it (`beforeKill` first), and what survived. */
  async function burstThroughFailover(project: string, beforeKill: () => Promise<void>) {
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    expect((await admin.putAccount("acme")).status).to.equal(201);
    expect((await admin.putProject("acme", project, demoProject())).status).to.equal(201);
    const key = await admin.keyWith("acme", project, ["Full access"]);
    const burst = projectClient(platform.baseUrl, "acme", project);

    const writes: Write[] = [];
    let n = 0;
    let stop = false;
    const writer = async () => {
      while (!stop) {
        const name = `w${++n}`;
        const startedAt = Date.now();
        let status = 0;
        try {
          status = (await burst.post(key, "customer?txsummary=false", { name })).status;
        } catch {
          status = 0;
        }
        writes.push({ name, startedAt, endedAt: Date.now(), status });
      }
    };
    const running = Array.from({ length: WRITERS }, writer);
    await until("writes flow", async () => writes.filter((w) => w.status === 201).length >= 50);
    await new Promise((r) => setTimeout(r, BEFORE_KILL_MS));
    await beforeKill();
    const killedAt = Date.now();
    redis.primary.kill();
    await until(
      "the sentinels promote the replica",
      async () => (await redis.currentPrimary()) === redis.replica.address,
      60_000,
    );
    // Go on until writes have succeeded for a while after the last failure.
    await until(
      "writes succeed again",
      async () => {
        const lastFailure = Math.max(
          killedAt,
          ...writes.filter((w) => w.status !== 201).map((w) => w.endedAt),
        );
        return Date.now() - lastFailure > SETTLE_MS && writes.some((w) => w.startedAt > lastFailure);
      },
      90_000,
    );
    stop = true;
    await Promise.all(running);

    // Recovery settles every intent the failover left behind (undoing writes that never finished).
    const intents = new WriteIntents(client, platform.dataConfig.REDIS_PREFIX);
    await until("no write intent is left", async () => (await intents.count()).recorded === 0, 60_000);

    const model = await platform.data.deps.projects.get("acme", project);
    const feed = platform.data.deps.live!.feed;
    const inFeed = new Set<string>();
    for (let after = "0-0"; ; ) {
      const events = await feed.read(model!.storage, after, 1000);
      if (events.length === 0) break;
      for (const e of events) inFeed.add(String(e.key));
      after = events.at(-1)!.id;
    }
    const stored = new Set<string>();
    for (let path: string | undefined = "customer?pagesize=1000"; path; ) {
      const page = await burst.get(key, path);
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      const last = page.body.at(-1)?.["@metadata"]?.next_batch as string | undefined;
      for (const row of last ? page.body.slice(0, -1) : page.body) stored.add(row.name);
      path = last?.slice(last.indexOf("/customer") + 1);
    }

    const acknowledged = writes.filter((w) => w.status === 201);
    const failed = writes.filter((w) => w.status !== 201);
    const report = {
      acknowledged,
      failed,
      killedAt,
      lostEvents: acknowledged.filter((w) => !inFeed.has(w.name)),
      lostRows: acknowledged.filter((w) => !stored.has(w.name)),
      eventsWithoutRow: [...inFeed].filter((name) => !stored.has(name)),
      unacknowledgedInFeed: failed.filter((w) => inFeed.has(w.name)),
    };
    const gap = failed.length === 0 ? 0 : Math.max(...failed.map((w) => w.endedAt)) - killedAt;
    console.log(
      `      ${project}: ${acknowledged.length} writes acknowledged (${acknowledged.filter((w) => w.endedAt < killedAt).length} before the kill); ` +
        `${failed.length} failed (statuses ${JSON.stringify(countBy(failed.map((w) => w.status)))}, the last ${(gap / 1000).toFixed(2)} s after the kill); ` +
        `LOST EVENTS: ${report.lostEvents.length}; lost rows: ${report.lostRows.length}; events without a row: ${report.eventsWithoutRow.length}; ` +
        `events of writes answered as failed: ${report.unacknowledgedInFeed.length}`,
    );
    return report;
  }

  function expectNothingLost(report: Awaited<ReturnType<typeof burstThroughFailover>>) {
    expect(
      report.lostEvents.map((w) => w.name),
      "acknowledged writes without an event",
    ).to.deep.equal([]);
    expect(
      report.lostRows.map((w) => w.name),
      "acknowledged writes whose row is gone",
    ).to.deep.equal([]);
    expect(report.eventsWithoutRow, "events whose row is not in the store").to.deep.equal([]);
  }

  it("the primary killed mid-burst: every acknowledged write has its event and its row", async () => {
    expectNothingLost(await burstThroughFailover("crash", async () => {}));
  });

  it("the primary killed while its replica's link stalls: still nothing acknowledged is lost", async () => {
    // The replica follows the primary through a relay; the relay stops passing anything on, writes
    // go on for a moment (the primary cannot reach its replica), then the primary dies.
    const relay = await replicaThroughRelay(redis);
    try {
      const report = await burstThroughFailover("stall", async () => {
        relay.hold();
        await new Promise((r) => setTimeout(r, STALL_MS));
      });
      expectNothingLost(report);
    } finally {
      await relay.close();
    }
  });
});

function countBy(values: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}
