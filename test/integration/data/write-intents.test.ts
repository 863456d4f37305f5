/**
 * Write intents and row locks against the real Redis: the Lua scripts
 * (all-or-nothing locking, stale and old-style locks, delete tombstones,
 * leases and claims) and the row-lock sessions built on them (the in-process
 * queue in front, staleness, the lock wait, leaving an intent for recovery).
 */
import { expect } from "chai";
import { type FeedBatch, parseFeedEntry } from "../../../services/data/src/store/change-feed.ts";
import type { PlannedWrite } from "../../../services/data/src/store/guarded-writes.ts";
import { IntentRecoverer } from "../../../services/data/src/store/intent-recoverer.ts";
import { retryPolicy } from "../../../services/data/src/store/retry-policy.ts";
import { RowLocks } from "../../../services/data/src/store/row-locks.ts";
import { RowQueue } from "../../../services/data/src/store/row-queue.ts";
import { newIntentId, WriteIntents } from "../../../services/data/src/store/write-intents.ts";
import { createLogger } from "../../../shared/logger.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { feedAppendedKey, feedStreamKey } from "../../../shared/redis/key-layout.ts";
import { RedisCommandRecorder } from "../../support/redis-commands.ts";
import {
  deleteKeys,
  isolationPrefix,
  keysMatching,
  testRedisClient,
  testStores,
} from "../../support/stores.ts";
import { until } from "../../support/until.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const update = (id: string, ck = "a"): PlannedWrite => ({
  kind: "update",
  collection: "shop.customer",
  before: { _id: id, _ck: ck, n: 1 },
  after: { _id: id, _ck: `${ck}2`, n: 2 },
});
const remove = (id: string, ck = "a"): PlannedWrite => ({
  kind: "delete",
  collection: "shop.customer",
  before: { _id: id, _ck: ck },
});
const body = (writes: PlannedWrite[] = []) => ({ database: "acme", writes });

describe("write intents in Redis", () => {
  let redis: RedisClient;
  let prefix: string;
  let intents: WriteIntents;
  const lock = (row: string, existed = true) => ({
    key: intents.lockKey("acme", "shop.customer", row),
    existed,
  });

  before(async () => {
    redis = await testRedisClient();
  });
  beforeEach(() => {
    prefix = `tessera-test:${isolationPrefix()}`;
    intents = new WriteIntents(redis, prefix);
  });
  afterEach(async () => {
    await deleteKeys(redis, await keysMatching(redis, `${prefix}*`));
  });
  after(() => redis.quit());
  /** What a database's writers leave in Redis (the registry of databases with intents aside). */
  const rowKeys = async () =>
    (await keysMatching(redis, `${prefix}*`)).filter((k) => k !== `${prefix}intent-databases`);

  it("locks all rows or none; the holder may add rows; finishing frees them", async () => {
    const a = newIntentId();
    const b = newIntentId();
    expect(await intents.acquire(a, [lock("x"), lock("y")], body(), 10_000)).to.equal("taken");
    expect(await intents.acquire(b, [lock("y"), lock("z")], body(), 10_000)).to.equal("busy");
    expect(await redis.exists(lock("z").key), "z was not taken").to.equal(0);
    expect(await intents.acquire(a, [lock("x"), lock("y"), lock("z")], body(), 10_000)).to.equal("taken");
    expect(
      await intents.finish("acme", a, a, [lock("x").key, lock("y").key, lock("z").key], new Set(), 0),
    ).to.equal("finished");
    expect(await intents.acquire(b, [lock("y"), lock("z")], body(), 10_000)).to.equal("taken");
    expect(await intents.finish("acme", a, a, [], new Set(), 0)).to.equal("gone");
    expect(await intents.count()).to.deep.equal({ recorded: 1, expired: 0 });
  });

  it("a lock whose intent is gone is free; a lock with an expiry (an older release's) is busy", async () => {
    await redis.set(lock("x").key, "ghost");
    expect(await intents.acquire(newIntentId(), [lock("x")], body(), 10_000)).to.equal("taken");
    await redis.set(lock("y").key, "0123abcd", "PX", 5000);
    expect(await intents.acquire(newIntentId(), [lock("y")], body(), 10_000)).to.equal("busy");
  });

  it("a committed delete leaves a tombstone: a plan that read the row as existing is stale", async () => {
    const a = newIntentId();
    await intents.acquire(a, [lock("x")], body([remove("x")]), 10_000);
    await intents.finish("acme", a, a, [lock("x").key], new Set([lock("x").key]), 60_000);
    expect(await redis.get(lock("x").key)).to.equal("~deleted");
    expect(await intents.acquire(newIntentId(), [lock("x", true)], body(), 10_000)).to.equal("stale");
    const c = newIntentId();
    await redis.set(lock("y").key, "~deleted", "PX", 60_000);
    expect(await intents.acquire(c, [lock("y", false)], body(), 10_000)).to.equal("taken");
    expect(await redis.get(lock("y").key)).to.equal(c);
  });

  it("an intent whose lease ran out is claimed once, with its writes; the old owner can no longer renew or finish it", async () => {
    const a = newIntentId();
    const writes: PlannedWrite[] = [
      {
        kind: "insert",
        collection: "shop.order",
        after: { _id: 7, _ck: "c", when: new Date(0), total: 1.5 },
      },
      update("x"),
    ];
    await intents.acquire(a, [lock("x")], body(writes), 200);
    expect(await intents.claim("r1", 1000)).to.equal(null);
    await until("the lease ran out", async () => (await intents.count()).expired === 1);
    expect(await intents.count()).to.deep.equal({ recorded: 1, expired: 1 });
    const claimed = await intents.claim("r1", 1000);
    expect(claimed).to.deep.include({ id: a, owner: "r1", database: "acme", keys: [lock("x").key] });
    expect(claimed!.writes).to.deep.equal(writes);
    expect(claimed!.ageMs).to.be.at.least(200);
    expect(await intents.claim("r2", 1000), "claimed once").to.equal(null);
    expect(await intents.renew("acme", a, a, 1000)).to.equal(false);
    expect(await intents.finish("acme", a, a, [lock("x").key], new Set(), 0)).to.equal("lost");
    expect(await intents.acquire(newIntentId(), [lock("x")], body(), 1000), "still locked").to.equal("busy");
    expect(await intents.finish("acme", a, "r1", claimed!.keys, new Set(), 0)).to.equal("finished");
    expect(await intents.acquire(newIntentId(), [lock("x")], body(), 1000)).to.equal("taken");
  });

  it("an intent handed over is claimable at once; its rows stay locked until the claimer finishes", async () => {
    const a = newIntentId();
    await intents.acquire(a, [lock("x")], body([update("x")]), 60_000);
    expect(await intents.claim("r1", 1000)).to.equal(null);
    expect(await intents.handOver("acme", a, "somebody else")).to.equal(false);
    expect(await intents.handOver("acme", a, a)).to.equal(true);
    expect(await intents.acquire(newIntentId(), [lock("x")], body(), 1000)).to.equal("busy");
    const claimed = await intents.claim("r1", 1000);
    expect(claimed?.id).to.equal(a);
    expect(await intents.renew("acme", a, "r1", 1000)).to.equal(true);
  });

  it("recovery finds intents through the registry of databases; an idle database leaves it, one with an intent never", async () => {
    const timing = { registerEveryMs: 100, pruneAfterMs: 300 };
    const writer = new WriteIntents(redis, prefix, timing);
    const recoverer = new WriteIntents(redis, prefix, timing);
    const registry = async () => (await redis.zrange(`${prefix}intent-databases`, 0, -1)).sort();
    /** Records an intent locking row `row` of table t of `database`. */
    const record = (id: string, database: string, row: number) =>
      writer.acquire(
        id,
        [{ key: writer.lockKey(database, "t", row), existed: true }],
        { database, writes: [] },
        60_000,
      );
    const idle = newIntentId();
    await record(idle, "idle", 1);
    await writer.finish("idle", idle, idle, [writer.lockKey("idle", "t", 1)], new Set(), 0);
    const busy = newIntentId();
    await record(busy, "busy", 1);
    expect(await registry()).to.deep.equal(["busy", "idle"]);
    expect(await recoverer.claim("r1", 1000), "nothing claimable yet").to.equal(null);
    expect(await registry(), "named a moment ago: kept").to.deep.equal(["busy", "idle"]);
    // Each claim prunes the databases named longer ago than pruneAfterMs that hold no intent.
    await until("idle and empty: dropped", async () => {
      expect(await recoverer.claim("r1", 1000)).to.equal(null);
      return (await registry()).length === 1;
    });
    expect(await registry(), "an intent keeps its database").to.deep.equal(["busy"]);
    // The writer names a database again once its interval passed: its next intent is found.
    const again = newIntentId();
    await record(again, "idle", 2);
    expect(await registry()).to.deep.equal(["busy", "idle"]);
    await writer.handOver("idle", again, again);
    expect((await recoverer.claim("r2", 1000))?.id).to.equal(again);
    expect(await recoverer.count()).to.deep.equal({ recorded: 2, expired: 0 });
  });

  it("a recovery pass over many written databases sends one batch of counts, and a script only where an intent waits", async function () {
    const stores = await testStores();
    if (stores.redis.REDIS_MODE !== "single") this.skip(); // MONITOR needs one server
    const writer = new WriteIntents(redis, prefix);
    const databases = Array.from({ length: 40 }, (_, i) => `db${i}`);
    let waiting = "";
    for (const database of databases) {
      const id = newIntentId();
      const key = writer.lockKey(database, "t", 1);
      await writer.acquire(id, [{ key, existed: true }], { database, writes: [] }, 60_000);
      if (database === "db17") {
        await writer.handOver(database, id, id);
        waiting = id;
      } else await writer.finish(database, id, id, [key], new Set(), 0);
    }
    const recorder = await RedisCommandRecorder.start(stores.redis.REDIS_URL, prefix);
    try {
      const recoverer = new WriteIntents(redis, prefix);
      let claimed: Awaited<ReturnType<WriteIntents["claim"]>> = null;
      const sent = await recorder.record(async () => {
        claimed = await recoverer.claim("r1", 1000);
      });
      expect(claimed!.id).to.equal(waiting);
      expect(
        sent.filter((c) => c === "evalsha" || c === "eval"),
        "one claim script",
      ).to.have.length(1);
      expect(sent.filter((c) => c === "zcount")).to.have.length(databases.length);
      expect(
        sent.filter((c) => c === "zcard"),
        "none named long ago: no count of all their intents",
      ).to.deep.equal([]);
      const idle = await recorder.record(() => recoverer.claim("r2", 1000));
      expect(
        idle.filter((c) => c === "evalsha" || c === "eval"),
        "nothing waits: no script",
      ).to.deep.equal([]);
      expect(await recoverer.count()).to.deep.equal({ recorded: 1, expired: 0 });
    } finally {
      await recorder.close();
    }
  });

  it("a writer remembers the databases it named within a memory budget: one forgotten is named again at its next intent", async () => {
    const timing = { registerEveryMs: 60_000, pruneAfterMs: 600_000 };
    const registry = `${prefix}intent-databases`;
    /** Records and finishes an intent in `database` with `writer`. */
    const write = async (writer: WriteIntents, database: string) => {
      const id = newIntentId();
      const key = writer.lockKey(database, "t", 1);
      await writer.acquire(id, [{ key, existed: true }], { database, writes: [] }, 60_000);
      await writer.finish(database, id, id, [key], new Set(), 0);
    };
    // About four databases' worth, and room for all twenty.
    const small = new WriteIntents(redis, prefix, timing, 1400);
    const large = new WriteIntents(redis, prefix, timing, 1024 * 1024);
    for (let i = 0; i < 20; i++) {
      await write(small, `db${i}`);
      await write(large, `db${i}`);
    }
    await redis.zrem(registry, "db0");
    await write(large, "db0");
    expect(await redis.zscore(registry, "db0"), "remembered: not named again within the interval").to.equal(
      null,
    );
    await write(small, "db0");
    expect(await redis.zscore(registry, "db0"), "forgotten past the budget: named again").to.not.equal(null);
  });

  it("a failed script call is 503 and carries none of its arguments (they hold rows)", async () => {
    await redis.set(`${prefix}intents:{acme}`, "not a sorted set");
    const secret = { ...update("x"), after: { _id: "x", _ck: "a2", card: "4111-SECRET" } };
    const err = await intents
      .acquire(newIntentId(), [lock("x")], body([secret]), 1000)
      .catch((e: unknown) => e);
    expect(err).to.deep.include({ statusCode: 503, errorCode: 5031 });
    expect((err as Error).cause).to.be.instanceOf(Error);
    expect((err as Error & { cause: Error }).cause.message).to.match(/^ReplyError: WRONGTYPE/);
    const everything =
      JSON.stringify(err, Object.getOwnPropertyNames(err)) + JSON.stringify((err as Error).cause);
    expect(everything).to.not.include("SECRET");
  });

  describe("the change feed", () => {
    const stream = () => feedStreamKey(prefix, "acme", "shop.");
    const batch = (): FeedBatch => ({
      tx: "t1",
      database: "acme",
      stream: stream(),
      appendedKey: feedAppendedKey(prefix, "acme", "t1"),
      maxLength: 1000,
      maxAgeMs: 3_600_000,
      entries: [
        ["tx", "t1", "table", "customer", "verb", "INSERT", "key", '"x"', "row", '{"_id":"x","_ck":"a"}'],
      ],
    });

    it("finishing the intent appends its events once; asking again (a lost reply) appends nothing", async () => {
      const id = newIntentId();
      expect(await intents.acquire(id, [lock("x", false)], body(), 10_000)).to.equal("taken");
      const keys = [lock("x", false).key];
      expect(await intents.finish("acme", id, id, keys, new Set(), 0, batch())).to.equal("finished");
      expect(await intents.finish("acme", id, id, keys, new Set(), 0, batch())).to.equal("gone");
      const entries = await redis.xrange(stream(), "-", "+");
      expect(entries.map(([entryId, flat]) => parseFeedEntry(entryId, flat)?.key)).to.deep.equal(["x"]);
    });

    it("an intent claimed by recovery is undone and released without events; its writer's late release appends nothing", async () => {
      const id = newIntentId();
      expect(await intents.acquire(id, [lock("x", false)], body(), 1)).to.equal("taken");
      const recoverer = new IntentRecoverer({
        intents,
        // Nothing of the (empty) intent was applied: nothing to undo.
        undo: async () => [],
        leaseMs: 10_000,
        intervalMs: 60_000,
        logger: createLogger("test", "silent"),
      });
      // The lease (1 ms) runs out by itself; recovery finds the intent once it has.
      let recovered = 0;
      while (recovered === 0) recovered = await recoverer.runOnce();
      expect(await intents.finish("acme", id, id, [lock("x", false).key], new Set(), 0, batch())).to.equal(
        "gone",
      );
      expect(await redis.exists(stream())).to.equal(0);
    });
  });

  describe("row counts (a plan's row limit)", () => {
    const insert = (id: string): PlannedWrite => ({
      kind: "insert",
      collection: "shop.customer",
      after: { _id: id, _ck: "n" },
    });
    const counts = async () => intents.rowCounts("acme");
    const rows = (limit: number | null, inserts: number, deletes = 0) => ({
      limit,
      tables: { "shop.customer": [inserts, deletes] as [number, number] },
    });

    it("asks for a seed first; reserves with the locks; refuses past the limit, taking nothing", async () => {
      const a = newIntentId();
      expect(
        await intents.acquire(a, [lock("x", false)], body([insert("x")]), 10_000, rows(2, 1)),
      ).to.deep.equal({
        seed: ["shop.customer"],
      });
      expect(await rowKeys(), "nothing taken").to.deep.equal([]);
      await intents.seedRows("acme", "shop.customer", 1);
      await intents.seedRows("acme", "shop.customer", 99);
      expect(await counts()).to.deep.equal(new Map([["shop.customer", 1]]));
      expect(await intents.acquire(a, [lock("x", false)], body([insert("x")]), 10_000, rows(2, 1))).to.equal(
        "taken",
      );
      expect(await counts()).to.deep.equal(new Map([["shop.customer", 2]]));
      const b = newIntentId();
      expect(
        await intents.acquire(b, [lock("y", false)], body([insert("y")]), 10_000, rows(2, 1)),
      ).to.deep.equal({
        over: { collection: "shop.customer", rows: 2 },
      });
      expect(await redis.exists(intents.lockKey("acme", "shop.customer", "y")), "no lock taken").to.equal(0);
      // A write that inserts one and deletes one adds nothing: it passes at the limit.
      expect(
        await intents.acquire(
          b,
          [lock("y", false), lock("z")],
          body([insert("y"), remove("z")]),
          10_000,
          rows(2, 1, 1),
        ),
      ).to.equal("taken");
    });

    it("a committed write gives back what it deleted, an undone one what it reserved; planning again replaces the reservation", async () => {
      await intents.seedRows("acme", "shop.customer", 5);
      const a = newIntentId();
      await intents.acquire(a, [lock("x", false)], body([insert("x")]), 10_000, rows(null, 3));
      await intents.acquire(a, [lock("x", false)], body([insert("x")]), 10_000, rows(null, 1));
      expect(await counts(), "the second plan's reservation replaced the first's").to.deep.equal(
        new Map([["shop.customer", 6]]),
      );
      await intents.finish("acme", a, a, [lock("x").key], new Set(), 0);
      expect(await counts(), "undone").to.deep.equal(new Map([["shop.customer", 5]]));
      const b = newIntentId();
      await intents.acquire(
        b,
        [lock("y", false), lock("z")],
        body([insert("y"), remove("z")]),
        10_000,
        rows(null, 1, 1),
      );
      expect(await counts()).to.deep.equal(new Map([["shop.customer", 6]]));
      await intents.finish("acme", b, b, [lock("y").key, lock("z").key], new Set(), 0, undefined, true);
      expect(await counts(), "committed: one in, one out").to.deep.equal(new Map([["shop.customer", 5]]));
    });

    it("with transactions: a reservation of its own, settled committed or not", async () => {
      await intents.seedRows("acme", "shop.customer", 1);
      const a = newIntentId();
      expect(await intents.reserveRows("acme", a, rows(2, 1), 10_000)).to.equal("taken");
      expect(await intents.reserveRows("acme", newIntentId(), rows(2, 1), 10_000)).to.deep.equal({
        over: { collection: "shop.customer", rows: 2 },
      });
      await intents.settleRows("acme", a, false);
      expect(await counts()).to.deep.equal(new Map([["shop.customer", 1]]));
      const b = newIntentId();
      expect(await intents.reserveRows("acme", b, rows(2, 1, 1), 10_000)).to.equal("taken");
      await intents.settleRows("acme", b, true);
      expect(await counts()).to.deep.equal(new Map([["shop.customer", 1]]));
      expect(await rowKeys(), "the reservations are gone").to.deep.equal([`${prefix}rowcount:{acme}`]);
    });
  });

  describe("row-lock sessions", () => {
    const logger = createLogger("test", "silent");
    const policy = retryPolicy({ lockWaitMs: 400, leaseMs: 2000 });
    // Nothing is stored in the store under "acme": every collection's row count starts at 0.
    const countRows = async () => 0;
    const process = (p = policy) =>
      new RowLocks({ queue: new RowQueue(), intents, policy: p, logger, countRows });

    it("requests of one process take turns in the queue; the later one's plan is stale", async () => {
      const locks = process();
      const first = locks.open("acme", true);
      expect(await first.hold([update("x")], Date.now())).to.equal(false);
      const second = locks.open("acme", true);
      let secondStale: boolean | undefined;
      const waiting = second.hold([update("x")], Date.now()).then((stale) => {
        secondStale = stale;
      });
      await sleep(50);
      expect(secondStale, "waits for the first").to.equal(undefined);
      await first.close();
      await waiting;
      expect(secondStale).to.equal(true);
      expect(await second.hold([update("x")], Date.now()), "planned again under the locks").to.equal(false);
      await second.close();
      expect(await rowKeys()).to.deep.equal([]);
    });

    it("rows a plan inserts are locked but are no reason to plan again", async () => {
      const session = process().open("acme", true);
      const insert = (id: number): PlannedWrite => ({
        kind: "insert",
        collection: "shop.order",
        after: { _id: id, _ck: "c" },
      });
      expect(await session.hold([insert(1), update("x")], Date.now())).to.equal(false);
      expect(await session.hold([insert(2), update("x")], Date.now())).to.equal(false);
      expect(await redis.get(intents.lockKey("acme", "shop.order", 2))).to.be.a("string");
      await session.close();
    });

    it("across processes: the later one waits in Redis and plans again; past the lock wait it answers 409", async () => {
      const one = process().open("acme", true);
      const two = process().open("acme", true);
      await one.hold([update("x")], Date.now());
      const waiting = two.hold([update("x")], Date.now());
      await sleep(100);
      await one.close();
      expect(await waiting).to.equal(true);
      const three = process().open("acme", true);
      const refused = await three.hold([update("x")], Date.now()).catch((err: unknown) => err);
      expect(refused).to.deep.include({ statusCode: 409, errorCode: 4091 });
      await two.close();
      await three.close();
    });

    it("an intent left for recovery keeps its rows locked", async () => {
      const left = process().open("acme", true);
      await left.hold([update("x")], Date.now());
      left.beginWrites();
      await left.leaveForRecovery();
      await left.close();
      const other = process().open("acme", true);
      const refused = await other.hold([update("x")], Date.now()).catch((err: unknown) => err);
      expect(refused).to.deep.include({ statusCode: 409 });
      expect((await intents.count()).expired).to.equal(1);
    });

    it("a committed delete makes a plan that read the row stale, and so does a plan older than a tombstone lives", async () => {
      const locks = process(retryPolicy({ ...policy, tombstoneMs: 1000 }));
      const deleter = locks.open("acme", true);
      await deleter.hold([remove("x")], Date.now());
      deleter.beginWrites();
      await deleter.committed([remove("x")]);
      await deleter.close();
      const late = locks.open("acme", true);
      expect(await late.hold([update("x")], Date.now())).to.equal(true);
      await late.close();
      const old = locks.open("acme", true);
      expect(await old.hold([update("y")], Date.now() - 2000)).to.equal(true);
      await old.close();
    });

    it("with transactions only the in-process queue is used", async () => {
      const session = process().open("acme", false);
      expect(await session.hold([update("x")], Date.now())).to.equal(false);
      expect(session.mayWrite).to.equal(true);
      expect(await rowKeys()).to.deep.equal([]);
      await session.close();
    });
  });
});
