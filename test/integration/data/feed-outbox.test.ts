/**
 * The feed outbox (writes committed in MongoDB transactions) against the real stores: records in
 * a MongoDB-wire server, the stream and the appended-once mark in Redis. What happens after a
 * commit when Redis is away, when the writer dies between appending and clearing, and when two
 * processes sweep at once. FerretDB has no transactions, so `record` runs here without a session;
 * that it runs inside the transaction is the unit suite's (test/unit/data/transactions.test.ts),
 * and `MONGO_URL=<replica set> make test` runs the platform's writes through it.
 */
import { expect } from "chai";
import mongoose, { type Connection } from "mongoose";
import { ChangeFeed, type FeedBatch, parseFeedEntry } from "../../../services/data/src/store/change-feed.ts";
import { FeedOutbox } from "../../../services/data/src/store/feed-outbox.ts";
import { OutboxSweeper } from "../../../services/data/src/store/feed-outbox-sweeper.ts";
import type { TenantStorage } from "../../../services/data/src/store/storage-names.ts";
import { TenantDatabases } from "../../../services/data/src/store/tenant-databases.ts";
import type { RowWrite } from "../../../services/data/src/store/tenant-rows.ts";
import { TransactionFeed } from "../../../services/data/src/store/transaction-feed.ts";
import { freePort } from "../../../services/dev-stack/src/stores.ts";
import { createLogger } from "../../../shared/logger.ts";
import { createRedisClient, type RedisClient } from "../../../shared/redis/clients.ts";
import {
  deleteKeys,
  isolationPrefix,
  keysMatching,
  testRedisClient,
  testStores,
} from "../../support/stores.ts";

const logger = createLogger("test", "silent");
const insertOf = (id: number, filler = ""): RowWrite => ({
  kind: "insert",
  table: "customer",
  after: { _id: id, _ck: `c${id}`, name: `n${id}`, filler },
});

describe("the feed outbox (transaction path) against MongoDB-wire and Redis", function () {
  this.timeout(60_000);
  let redis: RedisClient;
  let meta: Connection;
  let prefix: string;
  let feed: ChangeFeed;
  let outbox: FeedOutbox;
  let storage: TenantStorage;
  let otherStorage: TenantStorage;
  let tenants: TenantDatabases;
  /** How far the outbox's clock is ahead of the real one. */
  let clockAhead = 0;
  const retention = { maxLength: 10_000, maxAgeMs: 3_600_000 };
  /** A sweeper for which every record is older than its interval. */
  const sweeper = (batchSize = 100) =>
    new OutboxSweeper({ feed, outbox, intervalMs: 5000, logger, batchSize, now: () => Date.now() + 60_000 });
  const events = async (where = storage) => {
    const entries = await redis.xrange(feed.streamOf(where), "-", "+");
    return entries.map(([id, flat]) => parseFeedEntry(id, flat)!);
  };
  const recorded = () => outbox.records(storage.database).countDocuments({});
  /** What a transaction leaves behind: its database named where the sweeper looks, its events recorded. */
  const committed = async (writes: RowWrite[], where = storage): Promise<FeedBatch> => {
    const batch = feed.batch(where, writes);
    await outbox.register(batch.database);
    await outbox.record(batch);
    return batch;
  };

  before(async () => {
    redis = await testRedisClient();
    const { mongoUrl } = await testStores();
    const run = isolationPrefix();
    meta = await mongoose.createConnection(mongoUrl, { dbName: `tessera_outbox_${run}meta` }).asPromise();
    // As in the service: the tenant databases and META_DB share the client.
    tenants = new TenantDatabases(meta.getClient(), 10_000);
    storage = { database: `tessera_outbox_${run}acme`, collectionPrefix: "shop~1." };
    otherStorage = { database: `tessera_outbox_${run}beta`, collectionPrefix: "crm~1." };
    outbox = new FeedOutbox(meta, tenants, { now: () => Date.now() + clockAhead });
  });
  beforeEach(async () => {
    clockAhead = 0;
    prefix = `tessera-test:${isolationPrefix()}`;
    feed = new ChangeFeed(redis, prefix, retention);
    for (const s of [storage, otherStorage]) await outbox.records(s.database).deleteMany({});
  });
  afterEach(async () => {
    await deleteKeys(redis, await keysMatching(redis, `${prefix}*`));
  });
  after(async () => {
    for (const s of [storage, otherStorage]) await tenants.db(s.database).dropDatabase();
    await meta.dropDatabase();
    await meta.close();
    await redis.quit();
  });

  it("Redis away right after the commit: the events wait in the outbox; the sweeper appends them once", async () => {
    const away = createRedisClient({
      REDIS_MODE: "single",
      REDIS_URL: `redis://127.0.0.1:${await freePort()}/`,
      REDIS_TLS: false,
    });
    away.on("error", () => {});
    const deferred: [number, string][] = [];
    try {
      const writer = new TransactionFeed({
        feed: new ChangeFeed(away, prefix, retention),
        outbox,
        onDeferred: (n, reason) => deferred.push([n, reason]),
      });
      const batch = await committed([insertOf(1), insertOf(2)]);
      await writer.afterCommit(batch);
    } finally {
      away.disconnect();
    }
    expect(deferred).to.have.length(1);
    expect(deferred[0]![0]).to.equal(2);
    expect(await recorded(), "kept").to.equal(1);
    expect(await events(), "nothing reached the stream").to.deep.equal([]);

    expect(await sweeper().runOnce()).to.equal(2);
    const appended = await events();
    expect(appended.map((e) => [e.verb, e.key, e.row?.name])).to.deep.equal([
      ["INSERT", 1, "n1"],
      ["INSERT", 2, "n2"],
    ]);
    expect(await recorded(), "cleared").to.equal(0);
    expect(await sweeper().runOnce(), "a second sweep").to.equal(0);
    expect(await events()).to.have.length(2);
  });

  it("the writer appends and clears: nothing for the sweeper", async () => {
    const deferred: number[] = [];
    const writer = new TransactionFeed({ feed, outbox, onDeferred: (n) => deferred.push(n) });
    const batch = await committed([insertOf(1)]);
    await writer.afterCommit(batch);
    expect(deferred).to.deep.equal([]);
    expect(await recorded()).to.equal(0);
    expect((await events()).map((e) => e.tx)).to.deep.equal([batch.tx]);
  });

  it("the writer died between appending and clearing: the sweeper clears without appending again", async () => {
    const batch = await committed([insertOf(1), insertOf(2), insertOf(3)]);
    expect(await feed.appendOnce(batch)).to.equal(true);
    expect(await feed.appendOnce(batch), "asked twice").to.equal(false);
    expect(await sweeper().runOnce()).to.equal(0);
    expect(await recorded()).to.equal(0);
    expect((await events()).map((e) => e.key)).to.deep.equal([1, 2, 3]);
  });

  it("records younger than the sweep interval are their writer's", async () => {
    await committed([insertOf(1)]);
    const now = new OutboxSweeper({ feed, outbox, intervalMs: 60_000, logger });
    expect(await now.runOnce()).to.equal(0);
    expect(await recorded()).to.equal(1);
    expect(await events()).to.deep.equal([]);
  });

  it("two processes sweeping at once append each write's events once", async () => {
    const batches: FeedBatch[] = [];
    for (let i = 0; i < 25; i++) batches.push(await committed([insertOf(i * 2), insertOf(i * 2 + 1)]));
    const [a, b] = await Promise.all([sweeper(4).runOnce(), sweeper(3).runOnce()]);
    expect(a + b).to.equal(50);
    expect(await recorded()).to.equal(0);
    const appended = await events();
    expect(appended).to.have.length(50);
    const keysByTx = Map.groupBy(appended, (e) => e.tx);
    for (const batch of batches) {
      const keys = keysByTx.get(batch.tx)?.map((e) => e.key);
      expect(keys, batch.tx).to.have.length(2);
      expect(keys![1]).to.equal((keys![0] as number) + 1);
    }
  });

  it("a write whose events outgrow one record is kept in parts and appended whole, in order", async () => {
    const filler = "x".repeat(1_500_000);
    const batch = await committed([1, 2, 3, 4].map((i) => insertOf(i, filler)));
    expect(await outbox.records(storage.database).countDocuments({ tx: batch.tx })).to.be.greaterThan(1);
    expect(await sweeper().runOnce()).to.equal(4);
    const appended = await events();
    expect(appended.map((e) => e.key)).to.deep.equal([1, 2, 3, 4]);
    expect(appended.every((e) => e.row?.filler === filler)).to.equal(true);
    expect(await recorded()).to.equal(0);
  });

  it("the sweeper looks at every database named lately and forgets one idle and empty", async () => {
    const names = async () => (await outbox.databases()).map((d) => d.name);
    await committed([insertOf(1)]);
    await committed([insertOf(2)], otherStorage);
    expect(await names()).to.include.members([storage.database, otherStorage.database]);
    expect(await sweeper().runOnce()).to.equal(2);
    expect((await events()).map((e) => e.key)).to.deep.equal([1]);
    expect((await events(otherStorage)).map((e) => e.key)).to.deep.equal([2]);

    // Named within the last ten minutes: still looked at, although empty.
    await outbox.forgetIfIdle(otherStorage.database);
    expect(await names(), "named lately: kept").to.include(otherStorage.database);
    clockAhead = 11 * 60_000;
    await outbox.record(feed.batch(storage, [insertOf(3)]));
    const idle = (await outbox.databases()).filter((d) => d.idle).map((d) => d.name);
    expect(idle).to.include.members([storage.database, otherStorage.database]);
    // The sweep leaves the new record to its writer (younger than the interval) and looks at both.
    expect(await sweeper().runOnce()).to.equal(0);
    expect(await names(), "not empty: kept").to.include(storage.database);
    expect(await names(), "empty and idle: forgotten").to.not.include(otherStorage.database);
  });
});
