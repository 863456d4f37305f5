/**
 * Issue 5, plan-then-commit against a misbehaving store. A second data service
 * of the platform talks to MongoDB through a proxy (mongo-proxy.ts) that can
 * drop every connection at a chosen write, hold a write back while another
 * writer changes the row, and count the commands a request sends.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { type Collection, MongoClient } from "mongodb";
import { createDataService, type DataService } from "../../../services/data/src/service.ts";
import { dataConfigSchema, parseConfig } from "../../../shared/config.ts";
import { createLogger } from "../../../shared/logger.ts";
import { projectClient } from "../../support/http.ts";
import { testStores } from "../../support/stores.ts";
import { MongoProxy } from "./mongo-proxy.ts";
import { type CanonicalSetup, readState, recountProblems, setupProject } from "./support.ts";

describe("logic: store failures, concurrent writers and round trips", function () {
  this.timeout(60_000);
  let s: CanonicalSetup;
  let proxy: MongoProxy;
  let data: DataService;
  let server: http.Server;
  let viaProxy: ReturnType<typeof projectClient>;
  let mongo: MongoClient;
  /** A collection of the tenant database, straight to the store (not through the proxy). */
  let direct: (table: string) => Collection<{ _id: string | number }>;
  let order: number;
  let product: number;

  before(async () => {
    s = await setupProject();
    const { mongoUrl, redisUrl } = await testStores();
    proxy = new MongoProxy(mongoUrl);
    const port = await proxy.listen();
    const prefix = s.platform.prefix;
    const config = parseConfig(dataConfigSchema, {
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `tessera-test:${prefix}`,
      ADMIN_TOKEN: s.platform.adminToken,
      SERVICE_TOKEN: `service-${prefix}`,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
      MONGO_URL: `mongodb://127.0.0.1:${port}/?directConnection=true`,
      META_DB: `${prefix}meta`,
      TENANT_DB_PREFIX: prefix,
    });
    data = await createDataService(config, createLogger("data-proxied", config.LOG_LEVEL));
    server = http.createServer(data.app.callback());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    viaProxy = projectClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "acme", "shop");
    mongo = await new MongoClient(mongoUrl).connect();
    const db = mongo.db(data.deps.tenants.databaseName("acme"));
    direct = (table) => db.collection<{ _id: string | number }>(`shop.${table}`);

    await s.api.post(s.key, "customer", { name: "Alpha", credit_limit: 100000 });
    product = (await s.api.post(s.key, "product", { name: "Widget", price: 10 })).body.txsummary[0]
      .product_number;
    order = (await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" })).body.txsummary[0]
      .order_number;
    await s.api.post(s.key, "lineitem", { order_number: order, product_number: product, qty_ordered: 1 });
  });
  after(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await data.close();
    await proxy.close();
    await mongo.close();
    await s.close();
  });

  for (const [atWrite, outageMs] of [
    [1, 300],
    [2, 300],
    [3, 300],
    [4, 300],
    [3, 2000],
  ]) {
    it(`the store connection dropped at write ${atWrite} of a line-item insert for ${outageMs} ms → 503/5031 and no partial change`, async () => {
      const before = await readState(s.api, s.key);
      const dropped = proxy.armDrop({ atWrite, outageMs });
      const r = await viaProxy.post(s.key, "lineitem", {
        order_number: order,
        product_number: product,
        qty_ordered: 2,
      });
      await dropped;
      expect(r.status, JSON.stringify(r.body)).to.equal(503);
      expect(r.body.errorCode).to.equal(5031);
      // Read back through the other data service (its own connection): nothing of the request remains.
      expect(await readState(s.api, s.key)).to.deep.equal(before);
      // The proxied service reconnects and works again.
      const again = await viaProxy.post(s.key, "lineitem", {
        order_number: order,
        product_number: product,
        qty_ordered: 2,
      });
      expect(again.status, JSON.stringify(again.body)).to.equal(201);
      expect(recountProblems(await readState(s.api, s.key))).to.deep.equal([]);
    });
  }

  it("another writer changes the parent between planning and commit: the request is planned again, no update is lost", async () => {
    const customers = direct("customer");
    const held = proxy.armHold({
      atWrite: 1,
      match: (c) => c === "shop.customer",
      during: async () => {
        await customers.updateOne(
          { _id: "Alpha" },
          { $set: { credit_limit: 99999, _ck: "0123456789abcdef" } },
        );
      },
    });
    const r = await viaProxy.post(s.key, "lineitem", {
      order_number: order,
      product_number: product,
      qty_ordered: 4,
    });
    await held;
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const state = await readState(s.api, s.key);
    expect(state.customer[0]).to.include({ credit_limit: 99999 });
    expect(recountProblems(state)).to.deep.equal([]);
  });

  it("a row the client addressed with its checksum changed meanwhile: still 409, nothing written", async () => {
    const [line] = (
      await s.api.get(s.key, `lineitem?filter=${encodeURIComponent(`order_number = ${order}`)}`)
    ).body;
    const lines = direct("lineitem");
    const held = proxy.armHold({
      atWrite: 1,
      match: (c) => c === "shop.lineitem",
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
    // Warm up: project cache, transaction support probe, sandbox program.
    await viaProxy.post(s.key, "lineitem", { order_number: order, product_number: product, qty_ordered: 1 });
    const monitoring = new Set(["hello", "isMaster", "ismaster", "ping"]);
    const counts: Record<string, number>[] = [];
    for (let i = 0; i < 3; i++) {
      proxy.record();
      const r = await viaProxy.post(s.key, "lineitem", {
        order_number: order,
        product_number: product,
        qty_ordered: 1,
      });
      const commands = proxy.stopRecording().filter((c) => !monitoring.has(c));
      expect(r.status).to.equal(201);
      const byName: Record<string, number> = {};
      for (const c of commands) byName[c] = (byName[c] ?? 0) + 1;
      counts.push(byName);
    }
    // Reads: order, product, the new line's key, customer = 4 finds; writes: 1 insert + 3 updates.
    // (The generated key comes from Redis.)
    for (const byName of counts) {
      expect(byName).to.deep.equal({ find: 4, insert: 1, update: 3 });
    }
    console.log(`      round trips of one line-item insert: ${JSON.stringify(counts[0])}`);
  });
});
