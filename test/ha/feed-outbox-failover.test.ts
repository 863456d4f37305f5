/**
 * The change feed of writes committed in MongoDB transactions across a Redis Sentinel failover
 * (a primary, a replica and three sentinels, real processes; the outbox in the test's
 * MongoDB-wire store). The replica follows the primary through a relay that stops passing
 * anything on; a write's events are appended on the primary, no replica confirms them within the
 * wait, the primary dies, the replica is promoted without them. The feed outbox still holds them
 * (a record goes only once a replica confirmed its events), so the sweeper appends them to the new
 * primary — once. FerretDB has no transactions: the outbox is written here without a session, as
 * the transaction would write it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import type { Redis } from "ioredis";
import mongoose, { type Connection } from "mongoose";
import { ChangeFeed, type FeedBatch } from "../../services/data/src/store/change-feed.ts";
import { FeedOutbox } from "../../services/data/src/store/feed-outbox.ts";
import { OutboxSweeper } from "../../services/data/src/store/feed-outbox-sweeper.ts";
import { TenantDatabases } from "../../services/data/src/store/tenant-databases.ts";
import type { RowWrite } from "../../services/data/src/store/tenant-rows.ts";
import { TransactionFeed } from "../../services/data/src/store/transaction-feed.ts";
import { writeReplication } from "../../services/data/src/store/write-replication.ts";
import { createLogger } from "../../shared/logger.ts";
import { createRedisClient, type RedisClient } from "../../shared/redis/clients.ts";
import { replicaAckKey } from "../../shared/redis/key-layout.ts";
import { ReplicaAcks } from "../../shared/redis/replica-acks.ts";
import {
  replicaThroughRelay,
  type SentinelProcesses,
  startRedisSentinel,
} from "../support/redis-topologies.ts";
import { isolationPrefix, testStores } from "../support/stores.ts";
import type { TcpRelay } from "../support/tcp-relay.ts";
import { until } from "../support/until.ts";

const logger = createLogger("test", "silent");
const insertOf = (id: number): RowWrite => ({
  kind: "insert",
  table: "customer",
  after: { _id: id, _ck: `c${id}`, name: `n${id}` },
});

describe("Redis Sentinel: a transaction's events across a failover that loses them in Redis", function () {
  this.timeout(180_000);
  let dir: string;
  let redis: SentinelProcesses;
  let relay: TcpRelay;
  let client: RedisClient;
  let waitConnection: Redis;
  let meta: Connection;
  let tenants: TenantDatabases;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-outbox-failover-"));
    redis = await startRedisSentinel(dir);
    const topology = {
      REDIS_MODE: "sentinel" as const,
      REDIS_URL: "",
      REDIS_SENTINELS: redis.sentinelAddresses,
      REDIS_SENTINEL_MASTER: redis.master,
      REDIS_TLS: false,
    };
    client = createRedisClient(topology);
    client.on("error", () => {}); // reconnecting through the failover
    waitConnection = createRedisClient(topology) as Redis;
    waitConnection.on("error", () => {});
    const { mongoUrl } = await testStores();
    meta = await mongoose
      .createConnection(mongoUrl, { dbName: `tessera_outbox_ha_${isolationPrefix()}meta` })
      .asPromise();
    tenants = new TenantDatabases(meta.getClient(), 10_000);
    // The replica follows the primary through a relay the test can stall.
    relay = await replicaThroughRelay(redis);
  });
  after(async () => {
    await relay?.close();
    client?.disconnect();
    waitConnection?.disconnect();
    await meta?.dropDatabase();
    await meta?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("events no replica confirmed stay in the outbox; after the failover the sweeper appends them once", async () => {
    const prefix = `tessera-test:${isolationPrefix()}`;
    const storage = { database: `tessera_outbox_ha_${isolationPrefix()}acme`, collectionPrefix: "shop~1." };
    const unreplicated: string[] = [];
    const replicated = writeReplication(
      new ReplicaAcks(waitConnection, replicaAckKey(prefix), 300),
      logger,
      () => unreplicated.push("write"),
    );
    const feed = new ChangeFeed(client, prefix, { maxLength: 10_000, maxAgeMs: 3_600_000 });
    const outbox = new FeedOutbox(meta, tenants);
    const deferred: string[] = [];
    const writer = new TransactionFeed({
      feed,
      outbox,
      replicated,
      onDeferred: (_n, reason) => deferred.push(reason),
    });
    const commit = async (id: number): Promise<FeedBatch> => {
      const batch = feed.batch(storage, [insertOf(id)]);
      await writer.prepare(batch);
      await outbox.record(batch); // what the transaction writes
      await writer.afterCommit(batch);
      return batch;
    };
    const keysInStream = async () =>
      (await client.xrange(feed.streamOf(storage), "-", "+")).map(
        ([, fields]) => fields[fields.indexOf("key") + 1],
      );
    const recorded = () => outbox.records(storage.database).countDocuments({});

    // Confirmed by the replica: appended and cleared.
    await commit(1);
    expect(deferred).to.deep.equal([]);
    expect(await recorded()).to.equal(0);

    // The replica's link stalls: appended on the primary only, not confirmed, kept.
    relay.hold();
    await commit(2);
    expect(deferred).to.deep.equal(["unreplicated"]);
    expect(unreplicated).to.have.length(1);
    expect(await recorded(), "kept for the sweeper").to.equal(1);
    expect(await keysInStream()).to.deep.equal(["1", "2"]);

    redis.primary.kill();
    await until(
      "the sentinels promote the replica",
      async () => (await redis.currentPrimary()) === redis.replica.address,
      60_000,
    );
    await until("the client writes to the new primary", async () => {
      try {
        await client.set(`${prefix}probe`, "1");
        return true;
      } catch {
        return false;
      }
    });
    expect(await keysInStream(), "the failover lost write 2's event").to.deep.equal(["1"]);

    const sweeper = new OutboxSweeper({
      feed,
      outbox,
      replicated,
      intervalMs: 1000,
      logger,
      now: () => Date.now() + 60_000,
    });
    expect(await sweeper.runOnce(), "events appended by the sweeper").to.equal(1);
    expect(await keysInStream()).to.deep.equal(["1", "2"]);
    expect(await recorded()).to.equal(0);
    expect(await sweeper.runOnce(), "a second sweep").to.equal(0);
    expect(await keysInStream()).to.deep.equal(["1", "2"]);
    await tenants.db(storage.database).dropDatabase();
  });
});
