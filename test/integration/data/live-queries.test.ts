/**
 * Live queries (docs/realtime.md): SSE clients as real HTTP clients on
 * loopback, through the edge, on the canonical project (sum rules: a line
 * item changes its order and its customer). What each subscriber receives is
 * decided per event by its key's roles: row filters with the key's globals,
 * column limits.
 */
import { expect } from "chai";
import { compareIds } from "../../../services/data/src/feed/feed-hub.ts";
import { dataServiceEnv, startDataProcess } from "../../support/data-process.ts";
import { call, keyHeader } from "../../support/http.ts";
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
  // A version whose response event could reshape a GET's answer: no live form.
  d.apiVersions.v2 = { resources: {}, events: [{ type: "response", name: "wrap", code: "return;" }] };
  return d;
}

const change = (e: SseEvent) => e.event === "change";

/** A metric of a data service (0 when absent). */
async function metric(baseUrl: string, name: string): Promise<number> {
  const page = (await call(baseUrl, "GET", "/metrics")).body as string;
  const line = page.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(" ").pop()) : 0;
}

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
    const platform = await startPlatform({
      LIVE_MAX_STREAMS_PER_KEY: "3",
      LIVE_MAX_STREAMS_PER_ACCOUNT: "8",
      LIVE_KEY_CHECK_MS: "100",
      LIVE_HEARTBEAT_MS: "100",
    });
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

  it("subscribers of one table with different views, open at once, each receive only their own view of the same events", async () => {
    // Views share frames by key (roles, globals, filters): any sharing across views would show here.
    const betaWatcher = await s.admin.keyWith("acme", "shop", ["Watcher"], { customer: "Beta" });
    const betaOnly = `customer?filter=${encodeURIComponent("name = 'Beta'")}`;
    const [full, fullBeta, alpha, alphaAgain, beta] = await Promise.all([
      subscribe(s.key, "customer"),
      subscribe(s.key, betaOnly),
      subscribe(watcher, "customer"),
      subscribe(watcher, "customer"),
      subscribe(betaWatcher, "customer"),
    ]);
    for (const stream of [full, fullBeta, alpha, alphaAgain, beta])
      await stream.next((e) => e.event === "snapshot");
    const balanceOf = (r: { body: { txsummary: Row[] } }) =>
      r.body.txsummary.find((o) => o["@metadata"].resource === "customer")!.balance;
    // Alpha, Beta, Alpha again: a stream waiting for a later event has been sent every earlier one.
    const alpha1 = await postLine(s.api, s.key, lines.Alpha!, 11);
    const beta1 = await postLine(s.api, s.key, lines.Beta!, 12);
    const alpha2 = await postLine(s.api, s.key, lines.Alpha!, 13);
    for (const r of [alpha1, beta1, alpha2]) expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const isChange = (name: string, r: { body: { txsummary: Row[] } }) => (e: SseEvent) =>
      change(e) && e.data.name === name && e.data.balance === balanceOf(r);
    await full.next(isChange("Alpha", alpha2));
    await fullBeta.next(isChange("Beta", beta1));
    await alpha.next(isChange("Alpha", alpha2));
    await alphaAgain.next(isChange("Alpha", alpha2));
    await beta.next(isChange("Beta", beta1));
    const seen = (stream: SseStream) => stream.events.filter(change).map((e) => e.data as Row);
    expect(seen(full).map((c) => c.name)).to.deep.equal(["Alpha", "Beta", "Alpha"]);
    expect(seen(fullBeta).map((c) => c.name)).to.deep.equal(["Beta"]);
    expect(seen(alpha).map((c) => c.name)).to.deep.equal(["Alpha", "Alpha"]);
    expect(seen(alphaAgain)).to.deep.equal(seen(alpha));
    expect(seen(beta).map((c) => c.name)).to.deep.equal(["Beta"]);
    for (const object of [...seen(full), ...seen(fullBeta)]) expect(object).to.have.property("credit_limit");
    for (const object of [...seen(alpha), ...seen(beta)]) expect(object).to.not.have.property("credit_limit");
  });

  it("a revoked key's streams all end with a closed event; another key's stream goes on", async () => {
    const created = await s.admin.createKey("acme", "shop", {
      name: "revoked-twice",
      roles: ["Watcher"],
      globals: { customer: "Alpha" },
    });
    const [first, second, other] = await Promise.all([
      subscribe(created.body.apikey, "customer"),
      subscribe(created.body.apikey, "lineitem"),
      subscribe(watcher, "customer"),
    ]);
    for (const stream of [first, second, other]) await stream.next((e) => e.event === "snapshot");
    expect((await s.admin.deleteKey("acme", "shop", created.body.id)).status).to.equal(200);
    for (const stream of [first, second]) {
      expect((await stream.next((e) => e.event === "closed")).data.statusCode).to.equal(401);
      await stream.ended;
    }
    const r = await postLine(s.api, s.key, lines.Alpha!, 14);
    expect(r.status).to.equal(201);
    await other.next((e) => change(e) && e.data.name === "Alpha");
    expect(other.events.map((e) => e.event)).to.not.include("closed");
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

  it("a position the stream never reached answers reset too", async () => {
    const stream = await subscribe(s.key, "lineitem", { "last-event-id": "99999999999999-0" });
    await stream.next((e) => e.event === "snapshot");
    expect(stream.events.map((e) => e.event)).to.deep.equal(["reset", "snapshot"]);
  });

  it("a revoked key's stream ends with a closed event", async () => {
    const created = await s.admin.createKey("acme", "shop", {
      name: "revoked",
      roles: ["Watcher"],
      globals: { customer: "Alpha" },
    });
    const stream = await subscribe(created.body.apikey, "customer");
    await stream.next((e) => e.event === "snapshot");
    expect((await s.admin.deleteKey("acme", "shop", created.body.id)).status).to.equal(200);
    const error = await stream.next((e) => e.event === "closed");
    expect(error.data.statusCode).to.equal(401);
    await stream.ended;
  });

  it("a client that stops reading is cut with a resumable position, and resumes without loss", async () => {
    const url = `${s.platform.dataUrl}${s.api.root}/purchaseorder`;
    const slow = await openSse(url, keyHeader(s.key), { paused: true });
    open.push(slow);
    // Large orders until the server cuts the stream that nobody reads.
    const posted: number[] = [];
    const notes = "n".repeat(256 * 1024);
    while ((await metric(s.platform.dataUrl, "tessera_live_streams_cut_total")) === 0) {
      const r = await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha", notes });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      posted.push(r.body.txsummary[0].order_number);
    }
    // Changes after the cut reach the client only when it resumes.
    for (let i = 0; i < 2; i++)
      posted.push(
        (await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" })).body.txsummary[0].order_number,
      );
    slow.resume();
    const cut = await slow.next((e) => e.event === "cut");
    await slow.ended;
    const received = slow.events.filter(change).map((e) => e.data.order_number as number);
    const resumed = await subscribe(s.key, "purchaseorder", { "last-event-id": cut.data.last });
    const lastOrder = posted[posted.length - 1];
    await resumed.next((e) => change(e) && e.data.order_number === lastOrder);
    const again = resumed.events.filter(change).map((e) => e.data.order_number as number);
    expect([...received, ...again]).to.deep.equal(posted);
  });

  it("bad requests answer 400 before any stream: an object's URL, a version with response events", async () => {
    const objectUrl = await subscribe(s.key, `customer/${encodeURIComponent("Alpha")}`);
    const v2 = await openSse(`${s.platform.baseUrl}/rest/acme/shop/v2/customer`, keyHeader(s.key));
    open.push(v2);
    for (const refused of [objectUrl, v2])
      expect([refused.status, refused.body.errorCode]).to.deep.equal([400, 4001]);
    expect(v2.body.errorMessage).to.include("response events");
  });

  it("sends heartbeats while nothing changes", async () => {
    const stream = await subscribe(s.key, "product");
    await stream.next((e) => e.event === "snapshot");
    await stream.heartbeat(2);
  });

  it("a data replica that did not serve the write streams it too (each follows the feed itself)", async () => {
    const replica = await startDataProcess(dataServiceEnv(s.platform.dataConfig));
    try {
      const stream = await openSse(`${replica.base}${s.api.root}/lineitem`, keyHeader(s.key));
      open.push(stream);
      await stream.next((e) => e.event === "snapshot");
      expect((await postLine(s.api, s.key, lines.Alpha!, 9)).status).to.equal(201);
      await stream.next((e) => change(e) && e.data.qty_ordered === 9);
      // Shutting down, the replica cuts the stream with a position to resume from (elsewhere).
      replica.child.kill("SIGTERM");
      const cut = await stream.next((e) => e.event === "cut");
      expect(
        compareIds(cut.data.last, stream.events.find((e) => e.data.qty_ordered === 9)!.id!),
      ).to.be.at.least(0);
      await stream.ended;
      expect(await replica.exited).to.equal(0);
    } finally {
      if (replica.child.exitCode === null && !replica.child.killed) replica.child.kill("SIGTERM");
      await replica.exited;
    }
  });

  it("past the per-account limit of open streams the answer is 429", async () => {
    // An account of its own: no stream of another test counts.
    const other = await setupProject(definition(), { platform: s.platform, account: "other" });
    const keys = await Promise.all(
      [1, 2, 3].map(() => other.admin.keyWith("other", "shop", ["Watcher"], { customer: "X" })),
    );
    const opened: SseStream[] = [];
    for (const key of [...keys, ...keys, ...keys]) {
      const stream = await openSse(`${s.platform.baseUrl}${other.api.root}/customer`, keyHeader(key));
      open.push(stream);
      opened.push(stream);
    }
    expect(opened.map((o) => o.status)).to.deep.equal([200, 200, 200, 200, 200, 200, 200, 200, 429]);
    expect(opened[8]!.body.errorCode).to.equal(4295);
    expect(opened[8]!.body.errorMessage).to.include("account");
  });

  it("past the per-key limit of open streams the answer is 429", async () => {
    const key = await s.admin.keyWith("acme", "shop", ["Watcher"], { customer: "Alpha" });
    for (let i = 0; i < 3; i++) await (await subscribe(key, "customer")).next((e) => e.event === "snapshot");
    const refused = await subscribe(key, "customer");
    expect([refused.status, refused.body.errorCode]).to.deep.equal([429, 4295]);
  });
});
