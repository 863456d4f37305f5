/**
 * The change feed (docs/realtime.md): every committed write appends one event
 * per changed row to its project's Redis Stream, rule side effects included, in
 * the step that completes the write; a refused or undone write appends none.
 * The whole platform on FerretDB (no transactions: the write intent's release
 * appends the events; the release script itself: write-intents.test.ts).
 */
import { expect } from "chai";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { feedEvents } from "../../support/feed.ts";
import { startPlatform } from "../../support/platform.ts";
import { testRedisClient } from "../../support/stores.ts";
import {
  type CanonicalSetup,
  type LineFixture,
  loadLineFixture,
  postLine,
  type Row,
  setupProject,
} from "../rules/support.ts";

describe("change feed: switched off", function () {
  this.timeout(60_000);

  it("with FEED_ENABLED=false a committed write appends nothing", async () => {
    const redis = await testRedisClient();
    const s = await setupProject(undefined, { platform: await startPlatform({ FEED_ENABLED: "false" }) });
    try {
      const r = await s.api.post(s.key, "customer", { name: "Off", credit_limit: 10 });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(await feedEvents(redis, `tessera-test:${s.platform.prefix}`)).to.deep.equal([]);
    } finally {
      await s.platform.close();
      await redis.quit();
    }
  });
});

describe("change feed: committed writes", function () {
  this.timeout(60_000);
  let s: CanonicalSetup;
  let redis: RedisClient;
  let fixture: LineFixture;
  const events = () => feedEvents(redis, `tessera-test:${s.platform.prefix}`);

  before(async () => {
    redis = await testRedisClient();
    s = await setupProject();
    fixture = await loadLineFixture(s);
  });
  after(async () => {
    await s.close();
    await redis.quit();
  });

  it("a line item appends one event per txsummary row, its rules' side effects included, under one transaction id", async () => {
    const seen = (await events()).length;
    const r = await postLine(s.api, s.key, fixture, 3);
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const txsummary = r.body.txsummary as Row[];
    const added = (await events()).slice(seen);
    expect(added.map((e) => [e.table, e.verb, `R:${e.row?._ck}`])).to.deep.equal(
      txsummary.map((o) => [o["@metadata"].resource, o["@metadata"].verb, o["@metadata"].checksum]),
    );
    expect(new Set(added.map((e) => e.tx)).size).to.equal(1);
    const order = added.find((e) => e.table === "purchaseorder")!;
    expect(order.key).to.equal(fixture.order);
    expect(order.rules).to.include("order total");
    expect(order.oldChecksum).to.be.a("string");
    expect(order.row!.amount_total).to.equal(
      txsummary.find((o) => o["@metadata"].resource === "purchaseorder")!.amount_total,
    );
    const line = added.find((e) => e.table === "lineitem")!;
    expect(line.oldChecksum).to.equal(null);
    expect(line.row!.qty_ordered).to.equal(3);
  });

  it("a write a rule refuses appends nothing", async () => {
    const seen = await events();
    const r = await postLine(s.api, s.key, fixture, 0);
    expect(r.status, JSON.stringify(r.body)).to.be.within(400, 499);
    const tooMuch = await postLine(s.api, s.key, fixture, 1_000_000);
    expect(tooMuch.status, JSON.stringify(tooMuch.body)).to.be.within(400, 499);
    expect(await events()).to.deep.equal(seen);
  });

  it("a write with a stale checksum (409) appends nothing", async () => {
    const order = (await s.api.get(s.key, `purchaseorder/${fixture.order}`)).body[0] as Row;
    const seen = await events();
    const r = await s.api.put(s.key, `purchaseorder/${fixture.order}`, {
      "@metadata": { checksum: "0000000000000000" },
      notes: `changed ${order.order_number}`,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(409);
    expect(await events()).to.deep.equal(seen);
  });

  it("a delete's event carries the key and the old checksum and no row; the rules' updates follow", async () => {
    const line = (await postLine(s.api, s.key, fixture, 2)).body.txsummary.find(
      (o: Row) => o["@metadata"].resource === "lineitem",
    ) as Row;
    const seen = (await events()).length;
    const r = await s.api.delete(
      s.key,
      `lineitem/${line.lineitem_id}?checksum=${line["@metadata"].checksum}`,
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const added = (await events()).slice(seen);
    const gone = added.find((e) => e.table === "lineitem")!;
    expect([gone.verb, gone.key, gone.row, gone.oldChecksum]).to.deep.equal([
      "DELETE",
      line.lineitem_id,
      null,
      line["@metadata"].checksum.slice("R:".length),
    ]);
    expect(added.map((e) => e.table)).to.include("purchaseorder");
  });
});
