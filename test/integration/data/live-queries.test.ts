/**
 * Live queries (docs/realtime.md): SSE clients as real HTTP clients on
 * loopback, through the gateway, on the canonical project (sum rules: a line
 * item changes its order and its customer). What each subscriber receives is
 * decided per event by its key's roles: row filters with the key's globals,
 * column limits.
 */
import { expect } from "chai";
import { keyHeader } from "../../support/http.ts";
import { startPlatform } from "../../support/platform.ts";
import { openSse, type SseEvent, type SseStream } from "../../support/sse.ts";
import { type CanonicalSetup, canonicalProject, postLine, type Row, setupProject } from "../rules/support.ts";

/** The canonical project with a role that sees one customer (a global) and not its credit limit. */
function definition(): Row {
  const d = canonicalProject();
  d.roles.Watcher = {
    tables: {
      customer: { access: ["read"], rowFilter: "name = @{customer}", columns: ["name", "balance"] },
      lineitem: { access: ["read"] },
    },
  };
  return d;
}

const change = (e: SseEvent) => e.event === "change";

describe("live queries over SSE", function () {
  this.timeout(60_000);
  let s: CanonicalSetup;
  let watcher: string;
  const lines: Record<string, { order: number; product: number }> = {};
  const open: SseStream[] = [];
  const subscribe = async (key: string, path: string, headers: Record<string, string> = {}) => {
    const stream = await openSse(`${s.platform.baseUrl}${s.api.root}/${path}`, {
      ...keyHeader(key),
      ...headers,
    });
    open.push(stream);
    return stream;
  };

  before(async () => {
    const platform = await startPlatform({ LIVE_MAX_STREAMS_PER_KEY: "3", LIVE_KEY_CHECK_MS: "100" });
    s = await setupProject(definition(), { platform });
    watcher = await s.admin.keyWith("acme", "shop", ["Watcher"], { customer: "Alpha" });
    const product = (await s.api.post(s.key, "product", { name: "Widget", price: 10 })).body.txsummary[0]
      .product_number;
    for (const name of ["Alpha", "Beta"]) {
      await s.api.post(s.key, "customer", { name, credit_limit: 100000 });
      const order = (await s.api.post(s.key, "purchaseorder", { customer_name: name })).body.txsummary[0]
        .order_number;
      lines[name] = { order, product };
    }
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  after(() => s.platform.close());

  it("streams the current rows, then the rows a write's rules changed", async () => {
    const stream = await subscribe(s.key, "customer");
    const snapshot = await stream.next((e) => e.event === "snapshot");
    expect(snapshot.data.map((c: Row) => c.name)).to.have.members(["Alpha", "Beta"]);
    const r = await postLine(s.api, s.key, lines.Alpha!, 2);
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const alpha = await stream.next((e) => change(e) && e.data.name === "Alpha");
    expect(alpha.data["@metadata"].verb).to.equal("UPDATE");
    expect(alpha.data["@metadata"].rules).to.include("customer balance");
    expect(alpha.data.balance).to.equal(
      r.body.txsummary.find((o: Row) => o["@metadata"].resource === "customer").balance,
    );
  });

  it("a subscriber with a row filter never receives a row outside it, rule side effects included; nor a column it may not read", async () => {
    const stream = await subscribe(watcher, "customer");
    const snapshot = await stream.next((e) => e.event === "snapshot");
    expect(snapshot.data.map((c: Row) => c.name)).to.deep.equal(["Alpha"]);
    // Beta's balance changes by rule first, then Alpha's: once Alpha's arrives, Beta's would have.
    expect((await postLine(s.api, s.key, lines.Beta!, 3)).status).to.equal(201);
    expect((await postLine(s.api, s.key, lines.Alpha!, 4)).status).to.equal(201);
    await stream.next((e) => change(e) && e.data.name === "Alpha");
    const changes = stream.events.filter(change).map((e) => e.data as Row);
    expect(changes.map((c) => c.name)).to.deep.equal(["Alpha"]);
    for (const object of [...snapshot.data, ...changes]) {
      expect(object).to.not.have.property("credit_limit");
      expect(object).to.have.property("balance");
    }
  });

  it("Last-Event-ID resumes after the last event received, without loss and without a snapshot", async () => {
    const first = await subscribe(s.key, "lineitem");
    await first.next((e) => e.event === "snapshot");
    expect((await postLine(s.api, s.key, lines.Alpha!, 5)).status).to.equal(201);
    const seen = await first.next((e) => change(e) && e.data.qty_ordered === 5);
    first.close();
    for (const qty of [6, 7, 8])
      expect((await postLine(s.api, s.key, lines.Beta!, qty)).status).to.equal(201);
    const resumed = await subscribe(s.key, "lineitem", { "last-event-id": seen.id! });
    await resumed.next((e) => change(e) && e.data.qty_ordered === 8);
    expect(resumed.events.map((e) => [e.event, e.data.qty_ordered])).to.deep.equal([
      ["change", 6],
      ["change", 7],
      ["change", 8],
    ]);
  });

  it("a position the feed no longer keeps answers reset, then a snapshot", async () => {
    const stream = await subscribe(s.key, "lineitem", { "last-event-id": "1-0" });
    await stream.next((e) => e.event === "snapshot");
    expect(stream.events.map((e) => e.event)).to.deep.equal(["reset", "snapshot"]);
  });

  it("a revoked key's stream ends with an error event", async () => {
    const created = await s.admin.createKey("acme", "shop", {
      name: "revoked",
      roles: ["Watcher"],
      globals: { customer: "Alpha" },
    });
    const stream = await subscribe(created.body.apikey, "customer");
    await stream.next((e) => e.event === "snapshot");
    expect((await s.admin.deleteKey("acme", "shop", created.body.id)).status).to.equal(200);
    const error = await stream.next((e) => e.event === "error");
    expect(error.data.statusCode).to.equal(401);
    await stream.ended;
  });

  it("past the per-key limit of open streams the answer is 429", async () => {
    const key = await s.admin.keyWith("acme", "shop", ["Watcher"], { customer: "Alpha" });
    for (let i = 0; i < 3; i++) await (await subscribe(key, "customer")).next((e) => e.event === "snapshot");
    const refused = await subscribe(key, "customer");
    expect([refused.status, refused.body.errorCode]).to.deep.equal([429, 4295]);
  });
});
