/**
 * Issue 5, plan-then-commit against a misbehaving store. A second data service
 * of the platform talks to MongoDB through a proxy (mongo-proxy.ts) that can
 * drop every connection at a chosen write, hold a write back while another
 * writer changes the row, and count the commands a request sends.
 */
import { expect } from "chai";
import { type Collection, MongoClient } from "mongodb";
import type { DataService } from "../../../services/data/src/service.ts";
import { projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { RedisCommandRecorder } from "../../support/redis-commands.ts";
import { testStores } from "../../support/stores.ts";
import type { MongoProxy } from "./mongo-proxy.ts";
import { expectCutOff, type ProxiedDataService, startProxiedDataService } from "./proxied-data-service.ts";
import {
  type CanonicalSetup,
  expectLineAccepted,
  type LineFixture,
  loadLineFixture,
  postLine,
  readState,
  recountProblems,
  setupProject,
} from "./support.ts";

describe("logic: store failures, concurrent writers and round trips", function () {
  this.timeout(60_000);
  let s: CanonicalSetup;
  let proxy: MongoProxy;
  let data: DataService;
  let proxied: ProxiedDataService;
  let viaProxy: ReturnType<typeof projectClient>;
  let mongo: MongoClient;
  /** A collection of the tenant database, straight to the store (not through the proxy). */
  let direct: (table: string) => Collection<{ _id: string | number }>;
  /** The collection name of a table of the project (as the proxy sees it in commands). */
  let collectionOf: (table: string) => string;
  let fixture: LineFixture;

  let platform: Platform;

  before(async () => {
    // No periodic intent recovery (every request here undoes its own writes) and no webhook
    // delivery (its poll for subscribed projects): their Redis calls would land in the round
    // trips counted below now and then.
    platform = await startPlatform({ WRITE_RECOVERY_INTERVAL_MS: "3600000", WEBHOOK_DELIVERY: "false" });
    s = await setupProject(undefined, { platform });
    proxied = await startProxiedDataService(s.platform);
    proxy = proxied.proxy;
    data = proxied.data;
    viaProxy = projectClient(proxied.baseUrl, "acme", "shop");
    const { mongoUrl } = await testStores();
    mongo = await new MongoClient(mongoUrl).connect();
    const { storage } = (await data.deps.projects.get("acme", "shop"))!;
    collectionOf = (table) => `${storage.collectionPrefix}${table}`;
    const db = mongo.db(storage.database);
    direct = (table) => db.collection<{ _id: string | number }>(collectionOf(table));

    fixture = await loadLineFixture(s);
  });
  after(async () => {
    await proxied.close();
    await mongo.close();
    await s.close();
    await platform.close();
  });

  for (const [atWrite, outageMs] of [
    [1, 300],
    [2, 300],
    [3, 300],
    [4, 300],
    [3, 2000],
  ] as const) {
    it(`the store connection dropped at write ${atWrite} of a line-item insert for ${outageMs} ms → 503/5031 and no partial change`, async () => {
      const before = await readState(s.api, s.key);
      await expectCutOff(proxy, { atWrite, outageMs }, () => postLine(viaProxy, s.key, fixture, 2));
      // Read back through the other data service (its own connection): nothing of the request remains.
      expect(await readState(s.api, s.key)).to.deep.equal(before);
      // The proxied service reconnects and works again.
      await expectLineAccepted(s, viaProxy, fixture, 2);
    });
  }

  it("another writer changes the parent between planning and commit: the request is planned again, no update is lost", async () => {
    const customers = direct("customer");
    const held = proxy.armHold({
      atWrite: 1,
      match: (c) => c === collectionOf("customer"),
      during: async () => {
        await customers.updateOne(
          { _id: "Alpha" },
          { $set: { credit_limit: 99999, _ck: "0123456789abcdef" } },
        );
      },
    });
    const r = await postLine(viaProxy, s.key, fixture, 4);
    await held;
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const state = await readState(s.api, s.key);
    expect(state.customer[0]).to.include({ credit_limit: 99999 });
    expect(recountProblems(state)).to.deep.equal([]);
  });

  it("a row the client addressed with its checksum changed meanwhile: still 409, nothing written", async () => {
    const [line] = (
      await s.api.get(s.key, `lineitem?filter=${encodeURIComponent(`order_number = ${fixture.order}`)}`)
    ).body;
    const lines = direct("lineitem");
    const held = proxy.armHold({
      atWrite: 1,
      match: (c) => c === collectionOf("lineitem"),
      during: async () => {
        await lines.updateOne({ _id: line.lineitem_id }, { $set: { _ck: "fedcba9876543210" } });
      },
    });
    const before = await readState(s.api, s.key);
    const r = await viaProxy.put(s.key, `lineitem/${line.lineitem_id}`, {
      "@metadata": { checksum: line["@metadata"].checksum },
      qty_ordered: 7,
    });
    await held;
    expect(r.status, JSON.stringify(r.body)).to.equal(409);
    expect(r.body.errorCode).to.equal(4091);
    expect(await readState(s.api, s.key)).to.deep.equal(before);
  });

  it("counts the store round trips of the line-item cascade", async () => {
    // Warm up: project cache, transaction support probe, sandbox program, Lua scripts.
    await postLine(viaProxy, s.key, fixture, 1);
    const monitoring = new Set(["hello", "isMaster", "ismaster", "ping"]);
    // The usage meter's flush (every USAGE_FLUSH_MS) may fall inside a POST's window: not a round trip of the POST.
    const redis = await RedisCommandRecorder.start(
      s.platform.dataConfig.REDIS_URL,
      s.platform.dataConfig.REDIS_PREFIX,
      ["usage", "{usage-rounds}"],
    );
    const counts: { mongo: Record<string, number>; redis: Record<string, number> }[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        proxy.record();
        let status = 0;
        const redisCommands = await redis.record(async () => {
          status = (await postLine(viaProxy, s.key, fixture, 1)).status;
        });
        const commands = proxy.stopRecording().filter((c) => !monitoring.has(c));
        expect(status).to.equal(201);
        counts.push({ mongo: countByName(commands), redis: countByName(redisCommands) });
      }
    } finally {
      await redis.close();
    }
    // MongoDB reads: order, product, customer = 3 finds (the new line's key is not read: the
    // store's unique key refuses a duplicate); writes: 1 insert + 3 updates. Redis: the key record
    // (HGETALL), the generated key (a script), then one script call that locks the rows and records
    // the write intent, and one that releases both; every script by its SHA (the database was named
    // for recovery at the warm-up: once a minute per process).
    for (const c of counts) {
      expect(c.mongo).to.deep.equal({ find: 3, insert: 1, update: 3 });
      expect(c.redis).to.deep.equal({ hgetall: 1, evalsha: 3 });
    }
    console.log(`      round trips of one line-item insert: ${JSON.stringify(counts[0])}`);
  });
});

function countByName(commands: string[]): Record<string, number> {
  const byName: Record<string, number> = {};
  for (const c of commands) byName[c] = (byName[c] ?? 0) + 1;
  return byName;
}
