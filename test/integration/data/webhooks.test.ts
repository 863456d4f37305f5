/**
 * Webhooks (docs/webhooks.md): subscriptions through the admin API, deliveries
 * to real HTTP receivers on loopback (SANDBOX_ALLOW_LOOPBACK_FETCH, the
 * operator's switch), signed per Standard Webhooks; retries with a compressed
 * back-off clock, dead letters and their replay, the delivery log, the audit
 * trail, and the egress policy's refusals.
 */
import { expect } from "chai";
import { compareIds } from "../../../services/data/src/feed/feed-hub.ts";
import { verifyWebhook } from "../../../services/data/src/hooks/signature.ts";
import { call } from "../../support/http.ts";
import { startPlatform } from "../../support/platform.ts";
import { keysMatching, testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";
import { type Receiver, startReceiver, WEBHOOK_TEST_SETTINGS } from "../../support/webhook-receiver.ts";
import { type CanonicalSetup, canonicalProject, postLine, type Row, setupProject } from "../rules/support.ts";

const HOOKS = "/accounts/acme/projects/shop/webhooks";

/** A webhook attempts counter of a data service, by outcome (0 when absent). */
async function attempts(baseUrl: string, outcome: "delivered" | "failed" | "dead"): Promise<number> {
  const page = (await call(baseUrl, "GET", "/metrics")).body as string;
  const found = page
    .split("\n")
    .find((l) => l.startsWith("tessera_webhook_attempts_total{") && l.includes(`outcome="${outcome}"`));
  return found ? Number(found.split(" ").pop()) : 0;
}

describe("webhooks", function () {
  this.timeout(90_000);
  let s: CanonicalSetup;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };
  const subscribe = async (r: Receiver, body: Row) => {
    const created = await s.admin.send("POST", HOOKS, { url: r.url, ...body });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    r.setSecret(created.body.secret);
    return created.body as Row;
  };
  let product: number;
  let order: number;

  before(async () => {
    const platform = await startPlatform({
      ...WEBHOOK_TEST_SETTINGS,
      WEBHOOK_BACKOFF_BASE_MS: "50",
      WEBHOOK_BACKOFF_CAP_MS: "200",
      WEBHOOK_RETRY_WINDOW_SECONDS: "600",
      WEBHOOK_TIMEOUT_MS: "2000",
      WEBHOOK_CLAIM_IDLE_MS: "3000",
    });
    s = await setupProject(canonicalProject(), { platform });
    product = (await s.api.post(s.key, "product", { name: "Widget", price: 10 })).body.txsummary[0]
      .product_number;
    await s.api.post(s.key, "customer", { name: "Alpha", credit_limit: 100000 });
    order = (await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" })).body.txsummary[0]
      .order_number;
  });
  after(async () => {
    for (const r of receivers) await r.close();
    await s.platform.close();
  });

  it("shows the secret once, then never; lists and reads the subscription; records it in the audit trail", async () => {
    const r = await receiver();
    const created = await subscribe(r, { tables: ["customer"], description: "crm sync" });
    expect(created.secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(created).to.include({ url: r.url, filter: null, description: "crm sync" });
    expect(created.verbs).to.deep.equal(["INSERT", "UPDATE", "DELETE"]);
    const list = await s.admin.send("GET", HOOKS);
    expect(list.status).to.equal(200);
    expect(list.body.map((h: Row) => h.id)).to.include(created.id);
    const one = await s.admin.send("GET", `${HOOKS}/${created.id}`);
    expect(one.body).to.include({ id: created.id, retrying: 0, deadLetters: 0 });
    expect(JSON.stringify([list.body, one.body])).to.not.include(created.secret);
    const deleted = await s.admin.send("DELETE", `${HOOKS}/${created.id}`);
    expect(deleted.body).to.deep.equal({ id: created.id, deleted: true });
    expect((await s.admin.send("GET", `${HOOKS}/${created.id}`)).status).to.equal(404);
    const audit = (await s.admin.send("GET", "/accounts/acme/audit?pagesize=1000")).body as Row[];
    const summaries = audit.map((e) => e.summary as string);
    expect(summaries).to.include(`webhook ${created.id} deleted`);
    const made = summaries.find((x) => x.startsWith(`webhook ${created.id} created`));
    expect(made).to.include("tables [customer]");
    expect(JSON.stringify(audit)).to.not.include(created.secret);
  });

  it("refuses bad subscriptions with the documented errors and stores nothing", async () => {
    const before = (await s.admin.send("GET", HOOKS)).body.length;
    const cases: [Row, number, number][] = [
      [{ url: "http://127.0.0.1:1/x", tables: ["nope"] }, 400, 4001],
      [{ url: "http://127.0.0.1:1/x", tables: ["customer"], filter: "nope = 1" }, 400, 4002],
      [{ url: "http://127.0.0.1:1/x", tables: ["customer"], filter: "name = @{who}" }, 400, 4002],
      [{ url: "http://127.0.0.1:1/x", tables: ["customer"], verbs: ["MERGE"] }, 400, 4001],
      [{ url: "ftp://127.0.0.1/x", tables: ["customer"] }, 400, 4005],
      [{ url: "http://user:pw@127.0.0.1:1/x", tables: ["customer"] }, 400, 4005],
      // Private ranges and the metadata address stay refused even with loopback allowed.
      [{ url: "http://10.0.0.7/x", tables: ["customer"] }, 400, 4005],
      [{ url: "http://169.254.169.254/latest/meta-data", tables: ["customer"] }, 400, 4005],
      [{ url: "http://[fd00::1]/x", tables: ["customer"] }, 400, 4005],
      [{ tables: ["customer"] }, 400, 4001],
    ];
    for (const [body, status, code] of cases) {
      const r = await s.admin.send("POST", HOOKS, body);
      expect([r.status, r.body.errorCode], JSON.stringify(body)).to.deep.equal([status, code]);
    }
    expect((await s.admin.send("GET", HOOKS)).body.length).to.equal(before);
    expect((await s.admin.send("GET", `${HOOKS}/wh_000000000000000000000000`)).status).to.equal(404);
    expect((await s.admin.send("GET", "/accounts/acme/projects/nope/webhooks")).status).to.equal(404);
  });

  it("delivers each matching row change, rule side effects included, signed per Standard Webhooks", async () => {
    const r = await receiver();
    const all = await receiver();
    await subscribe(r, { tables: ["customer"], verbs: ["UPDATE", "INSERT"], filter: "balance > 0" });
    const everything = await subscribe(all, { tables: ["lineitem"] });
    // Not delivered to r: the filter does not take it.
    expect((await s.api.post(s.key, "customer", { name: "Zero", credit_limit: 1 })).status).to.equal(201);
    const line = await postLine(s.api, s.key, { order, product }, 2);
    expect(line.status, JSON.stringify(line.body)).to.equal(201);
    await until("the customer a rule changed arrives", async () => r.delivered().size >= 1);
    await until("the line item arrives", async () => all.delivered().size >= 1);
    expect(r.received.map((d) => `${d.body.type} ${d.body.data.table}`)).to.deep.equal([
      "row.updated customer",
    ]);
    expect(all.received.map((d) => `${d.body.type} ${d.body.data.table}`)).to.deep.equal([
      "row.inserted lineitem",
    ]);
    for (const d of [...r.received, ...all.received]) {
      expect(d.signed, "signature").to.equal(true);
      expect(d.id).to.match(/^msg_wh_[0-9a-f]{24}_\d+-\d+$/);
      expect(Math.abs(d.timestamp - Date.now() / 1000)).to.be.below(120);
      expect(d.body.data).to.include({ account: "acme", project: "shop" });
    }
    const customer = r.received[0]!.body.data;
    expect(customer.row.balance).to.equal(20);
    expect(customer.rules).to.include("customer balance");
    expect(customer.checksum).to.match(/^R:/);
    expect(customer.row).to.not.have.property("_id");
    // A delete reaches the subscription without a verb list, not the one without DELETE.
    const id = line.body.txsummary.find((o: Row) => o["@metadata"].resource === "lineitem").lineitem_id;
    const checksum = line.body.txsummary.find((o: Row) => o["@metadata"].resource === "lineitem")["@metadata"]
      .checksum;
    expect((await s.api.delete(s.key, `lineitem/${id}?checksum=${checksum}`)).status).to.equal(200);
    await until("the delete arrives", async () =>
      all.received.some((d) => d.body.type === "row.deleted" && d.body.data.oldRow.lineitem_id === id),
    );
    // Not the delete to r (no DELETE in its verbs); the rule that took the balance back to 0 took the
    // customer out of r's filter (balance > 0): that update is a row.left.
    await until("the customer's leave arrives", async () =>
      r.received.some((d) => d.body.type === "row.left"),
    );
    expect(r.received.map((d) => d.body.type)).to.deep.equal(["row.updated", "row.left"]);
    expect(r.received[1]!.body.data).to.include({ key: "Alpha", row: null });
    // A wrong secret does not verify: the signature is over id, timestamp and body.
    const d = all.received[0]!;
    expect(verifyWebhook(everything.secret, d.id, d.timestamp, JSON.stringify(d.body), "v1,AAAA")).to.equal(
      false,
    );
  });

  it("a filter with like fires; an update that takes a row out of the filter is delivered as row.left, its key only", async () => {
    const r = await receiver();
    await subscribe(r, {
      tables: ["customer"],
      verbs: ["UPDATE", "DELETE"],
      filter: "name like 'Le%' and credit_limit > 100",
    });
    const put = async (name: string, credit_limit: number) => {
      const current = (await s.api.get(s.key, `customer/${name}`)).body[0];
      const done = await s.api.put(s.key, `customer/${name}`, {
        credit_limit,
        "@metadata": current["@metadata"],
      });
      expect(done.status, JSON.stringify(done.body)).to.equal(200);
    };
    for (const name of ["Leaver", "Lean"])
      expect((await s.api.post(s.key, "customer", { name, credit_limit: 500 })).status).to.equal(201);
    await put("Leaver", 600); // still matches: row.updated
    await put("Leaver", 50); // leaves the filter: row.left
    await put("Leaver", 40); // outside already: nothing
    const gone = (await s.api.get(s.key, "customer/Leaver")).body[0];
    expect(
      (await s.api.delete(s.key, `customer/Leaver?checksum=${gone["@metadata"].checksum}`)).status,
    ).to.equal(200); // outside: nothing
    await put("Lean", 700); // matches: row.updated (after the others in the feed)
    await until("three deliveries", async () => r.delivered().size >= 3);
    const byPosition = [...r.received].sort((a, b) => compareIds(a.body.data.position, b.body.data.position));
    expect(byPosition.map((d) => `${d.body.type} ${d.body.data.key}`)).to.deep.equal([
      "row.updated Leaver",
      "row.left Leaver",
      "row.updated Lean",
    ]);
    expect(byPosition[0]!.body.data.row).to.include({ name: "Leaver", credit_limit: 600 });
    expect(byPosition[1]!.body.data).to.include({ verb: "UPDATE", key: "Leaver", row: null, checksum: null });
  });

  it("a receiver down for a while then back gets every event (retries with back-off; dedup by webhook-id)", async () => {
    const r = await receiver();
    const hook = await subscribe(r, { tables: ["lineitem"], verbs: ["INSERT"] });
    await r.down();
    const failedBefore = await attempts(s.platform.dataUrl, "failed");
    const qtys = [11, 12, 13, 14, 15];
    for (const qty of qtys)
      expect((await postLine(s.api, s.key, { order, product }, qty)).status).to.equal(201);
    // Down for the compressed window: as a 30 s outage is at the default back-off (attempts at 0, 5,
    // 15 and 35 s), until every event failed three times (here 50, 100, 200 ms apart).
    await until("each event failed three times", async () => {
      const log = (await s.admin.send("GET", `${HOOKS}/${hook.id}/deliveries?pagesize=1000`)).body as Row[];
      const thrice = log.filter((e) => e.outcome === "failed" && e.attempt >= 3).map((e) => e.webhookId);
      return new Set(thrice).size === qtys.length;
    });
    expect(await attempts(s.platform.dataUrl, "failed")).to.be.at.least(failedBefore + 15);
    expect((await s.admin.send("GET", `${HOOKS}/${hook.id}`)).body.retrying).to.equal(5);
    await r.up();
    await until("every event delivered", async () => r.delivered().size === 5);
    expect(r.received.every((d) => d.signed)).to.equal(true);
    expect(r.received.map((d) => d.body.data.row.qty_ordered).sort()).to.deep.equal(qtys);
    const log = (await s.admin.send("GET", `${HOOKS}/${hook.id}/deliveries?pagesize=1000`)).body as Row[];
    const delivered = log.filter((e) => e.outcome === "delivered");
    expect(delivered).to.have.length(5);
    for (const e of delivered) {
      expect(e.status).to.equal(200);
      expect(e.attempt).to.be.at.least(4);
      expect(e.latencyMs).to.be.a("number");
    }
    const failure = log.find((e) => e.outcome === "failed")!;
    expect(failure.status).to.equal(null);
    expect(failure.error).to.be.a("string").and.not.equal("");
    expect((await s.admin.send("GET", `${HOOKS}/${hook.id}`)).body.retrying).to.equal(0);
  });

  it("changes what a subscription delivers (PATCH) and keeps its queue; refuses bad changes, changing nothing", async () => {
    const down = await receiver();
    const r = await receiver();
    const hook = await subscribe(down, { tables: ["customer"], verbs: ["INSERT"], description: "first" });
    r.setSecret(down.secret);
    await down.down();
    expect((await s.api.post(s.key, "customer", { name: "Queued", credit_limit: 1 })).status).to.equal(201);
    await until("the event waits for a retry", async () => {
      return (await s.admin.send("GET", `${HOOKS}/${hook.id}`)).body.retrying === 1;
    });
    const changed = await s.admin.send("PATCH", `${HOOKS}/${hook.id}`, {
      url: r.url,
      tables: ["customer", "product"],
      filter: "name <> 'Skipped'",
    });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body).to.deep.include({
      id: hook.id,
      url: r.url,
      tables: ["customer", "product"],
      verbs: ["INSERT"],
      filter: "name <> 'Skipped'",
      description: "first",
      previousSecretExpires: null,
    });
    expect(changed.body).to.not.have.property("secret");
    // The queued retry goes to the new URL, signed with the same secret.
    await until("the queued event delivered to the new URL", async () => r.delivered().size === 1);
    expect(r.received[0]!.body.data.row.name).to.equal("Queued");
    // The new table and filter apply from the next events on (the worker sees a change within a second).
    await until("a product delivered", async () => {
      await s.api.post(s.key, "product", { name: "Skipped", price: 1 });
      await s.api.post(s.key, "product", { name: "Taken", price: 1 });
      return r.received.some((d) => d.body.data.table === "product");
    });
    expect(r.received.map((d) => d.body.data.row.name)).to.not.include("Skipped");
    expect(r.received.every((d) => d.signed)).to.equal(true);
    const now = (await s.admin.send("GET", `${HOOKS}/${hook.id}`)).body;
    const bad: [Row, number, number][] = [
      [{}, 400, 4001],
      [{ tables: ["nope"] }, 400, 4001],
      [{ tables: [] }, 400, 4001],
      [{ verbs: ["MERGE"] }, 400, 4001],
      [{ filter: "nope = 1" }, 400, 4002],
      [{ url: "ftp://127.0.0.1/x" }, 400, 4005],
      [{ url: "http://169.254.169.254/x" }, 400, 4005],
      [{ secret: "whsec_AAAA" }, 400, 4001],
      [{ id: "wh_000000000000000000000000" }, 400, 4001],
    ];
    for (const [body, status, code] of bad) {
      const refused = await s.admin.send("PATCH", `${HOOKS}/${hook.id}`, body);
      expect([refused.status, refused.body.errorCode], JSON.stringify(body)).to.deep.equal([status, code]);
    }
    expect((await s.admin.send("GET", `${HOOKS}/${hook.id}`)).body).to.deep.equal(now);
    const missing = await s.admin.send("PATCH", `${HOOKS}/wh_000000000000000000000000`, { description: "x" });
    expect([missing.status, missing.body.errorCode]).to.deep.equal([404, 4041]);
    const cleared = await s.admin.send("PATCH", `${HOOKS}/${hook.id}`, { filter: null, verbs: ["UPDATE"] });
    expect(cleared.body).to.deep.include({ filter: null, verbs: ["UPDATE"] });
    const audit = (await s.admin.send("GET", "/accounts/acme/audit?pagesize=1000")).body as Row[];
    const summaries = audit.map((e) => e.summary as string);
    expect(summaries).to.include(
      `webhook ${hook.id} changed: url ${r.url}, tables [customer, product], a filter`,
    );
    expect(summaries).to.include(`webhook ${hook.id} changed: verbs [UPDATE], no filter`);
    expect(summaries).to.include(`webhook ${hook.id}: change refused`);
    expect((await s.admin.send("DELETE", `${HOOKS}/${hook.id}`)).status).to.equal(200);
  });

  it("rotates a subscription's secret: shown once; the previous one signs beside it for as long as asked", async () => {
    const r = await receiver();
    const hook = await subscribe(r, { tables: ["product"], verbs: ["INSERT"] });
    const first = r.secret;
    const rotated = await s.admin.send("POST", `${HOOKS}/${hook.id}/secret`);
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(200);
    const second = rotated.body.secret as string;
    expect(second)
      .to.match(/^whsec_/)
      .and.not.equal(first);
    const expires = Date.parse(rotated.body.previousSecretExpires);
    expect(expires - Date.now()).to.be.within(86_000_000, 86_400_000);
    const view = (await s.admin.send("GET", `${HOOKS}/${hook.id}`)).body;
    expect(view.previousSecretExpires).to.equal(rotated.body.previousSecretExpires);
    expect(JSON.stringify(view)).to.not.include(second).and.not.include(first);
    // From the moment the rotation is answered, deliveries carry both signatures.
    const signedBy = (d: Receiver["received"][number], secret: string) =>
      verifyWebhook(secret, d.id, d.timestamp, JSON.stringify(d.body), d.signature);
    /** The delivery of a product inserted now. */
    const deliveryOf = async (name: string) => {
      expect((await s.api.post(s.key, "product", { name, price: 1 })).status).to.equal(201);
      await until(`${name} delivered`, async () => r.received.some((d) => d.body.data.row.name === name));
      return r.received.find((d) => d.body.data.row.name === name)!;
    };
    const both = await deliveryOf("Rotating");
    expect(both.signature.split(" ")).to.have.length(2);
    expect([signedBy(both, first), signedBy(both, second)]).to.deep.equal([true, true]);
    // Each rotation's new secret signs the very next delivery; the one before it goes on beside it.
    let previous = second;
    for (let round = 0; round < 3; round++) {
      const next = (await s.admin.send("POST", `${HOOKS}/${hook.id}/secret`)).body.secret as string;
      const d = await deliveryOf(`Rotating ${round}`);
      expect([signedBy(d, next), signedBy(d, previous)], `round ${round}`).to.deep.equal([true, true]);
      previous = next;
    }
    // A leaked secret: rotated with no overlap, the previous one signs nothing more, from the answer on.
    const again = await s.admin.send("POST", `${HOOKS}/${hook.id}/secret`, { previousSecretSeconds: 0 });
    expect(again.status).to.equal(200);
    expect(again.body.previousSecretExpires).to.equal(null);
    const third = again.body.secret as string;
    const last = await deliveryOf("Rotated");
    expect(last.signature.split(" ")).to.have.length(1);
    expect(signedBy(last, third)).to.equal(true);
    expect([signedBy(last, first), signedBy(last, second), signedBy(last, previous)]).to.deep.equal([
      false,
      false,
      false,
    ]);
    for (const body of [
      { previousSecretSeconds: -1 },
      { previousSecretSeconds: 8 * 86_400 },
      { secret: third },
    ]) {
      const refused = await s.admin.send("POST", `${HOOKS}/${hook.id}/secret`, body);
      expect([refused.status, refused.body.errorCode], JSON.stringify(body)).to.deep.equal([400, 4001]);
    }
    const missing = await s.admin.send("POST", `${HOOKS}/wh_000000000000000000000000/secret`);
    expect(missing.status).to.equal(404);
    const audit = (await s.admin.send("GET", "/accounts/acme/audit?pagesize=1000")).body as Row[];
    const summaries = audit.map((e) => e.summary as string);
    expect(summaries).to.include(
      `webhook ${hook.id}: secret rotated, the previous one signs for 86400 s more`,
    );
    expect(summaries).to.include(`webhook ${hook.id}: secret rotated, the previous one signs for 0 s more`);
    expect(JSON.stringify(audit)).to.not.include(third).and.not.include(second);
    expect((await s.admin.send("DELETE", `${HOOKS}/${hook.id}`)).status).to.equal(200);
  });

  it("a definition change that breaks a subscription's filter: it says so, its events wait, and a PATCH releases them", async () => {
    const withColor = canonicalProject();
    withColor.tables.product.columns.color = { type: "string" };
    expect((await s.admin.putProject("acme", "shop", withColor)).status).to.equal(200);
    const r = await receiver();
    const hook = await subscribe(r, {
      tables: ["product"],
      verbs: ["INSERT"],
      filter: "name = 'Waits' or color = 'red'",
    });
    const view = async () => (await s.admin.send("GET", `${HOOKS}/${hook.id}`)).body as Row;
    expect((await view()).problem).to.equal(null);
    // The column goes: the filter no longer compiles on the project.
    expect((await s.admin.putProject("acme", "shop", canonicalProject())).status).to.equal(200);
    const problem = (await view()).problem as string;
    expect(problem).to.include("color").and.include("its events wait");
    const listed = (await s.admin.send("GET", HOOKS)).body as Row[];
    expect(listed.find((h) => h.id === hook.id)!.problem).to.equal(problem);
    expect((await s.api.post(s.key, "product", { name: "Waits", price: 1 })).status).to.equal(201);
    expect((await s.api.post(s.key, "product", { name: "Other", price: 1 })).status).to.equal(201);
    // Checked as at creation: a change that keeps the broken filter is refused.
    const kept = await s.admin.send("PATCH", `${HOOKS}/${hook.id}`, { description: "x" });
    expect([kept.status, kept.body.errorCode]).to.deep.equal([400, 4002]);
    const fixed = await s.admin.send("PATCH", `${HOOKS}/${hook.id}`, { filter: "name = 'Waits'" });
    expect(fixed.status, JSON.stringify(fixed.body)).to.equal(200);
    expect((await view()).problem).to.equal(null);
    // The events that waited go out under the new filter: none was dropped meanwhile.
    await until("the waiting event delivered", async () => r.delivered().size === 1);
    expect(r.received.map((d) => d.body.data.row.name)).to.deep.equal(["Waits"]);
    expect((await s.admin.send("DELETE", `${HOOKS}/${hook.id}`)).status).to.equal(200);
  });

  it("a subscription deleted while a delivery is under way leaves no state behind", async () => {
    const r = await receiver();
    r.answer("hold");
    const hook = await subscribe(r, { tables: ["lineitem"], verbs: ["INSERT"] });
    expect((await postLine(s.api, s.key, { order, product }, 21)).status).to.equal(201);
    await until("the delivery is held", async () => r.held() === 1);
    const failed = await attempts(s.platform.dataUrl, "failed");
    expect((await s.admin.send("DELETE", `${HOOKS}/${hook.id}`)).status).to.equal(200);
    r.release(500);
    await until("the attempt is settled", async () => {
      const now = await attempts(s.platform.dataUrl, "failed");
      return now > failed;
    });
    const redis = await testRedisClient();
    try {
      const prefix = s.platform.dataConfig.REDIS_PREFIX;
      const left = await keysMatching(redis, `${prefix}hook-*${hook.id}`);
      expect(left).to.deep.equal([]);
      const [feed] = await keysMatching(redis, `${prefix}feed:*`);
      const groups = (await redis.xinfo("GROUPS", feed!)) as string[][];
      expect(groups.map((g) => g[1])).to.not.include(`hook:${hook.id}`);
    } finally {
      redis.disconnect();
    }
  });

  it("a deleted project's subscriptions and their state go; one created again under the name has none", async () => {
    const r = await receiver();
    r.answer(500);
    const hook = await subscribe(r, { tables: ["product"] });
    expect((await s.api.post(s.key, "product", { name: "Doomed", price: 1 })).status).to.equal(201);
    await until("a failed attempt", async () => r.received.length >= 1);
    expect((await s.admin.send("DELETE", "/accounts/acme/projects/shop")).status).to.equal(200);
    const redis = await testRedisClient();
    try {
      const prefix = s.platform.dataConfig.REDIS_PREFIX;
      await until("every key of the subscription is gone", async () => {
        const left = await keysMatching(redis, `${prefix}hook*`);
        return left.length === 0;
      });
    } finally {
      redis.disconnect();
    }
    expect((await s.admin.putProject("acme", "shop", canonicalProject())).status).to.equal(201);
    expect((await s.admin.send("GET", HOOKS)).body).to.deep.equal([]);
    expect((await s.admin.send("GET", `${HOOKS}/${hook.id}`)).status).to.equal(404);
  });
});

/** A platform with the operator's loopback switch and the given webhook timings, the canonical project, a receiver. */
async function setupWithReceiver(
  timing: Record<string, string>,
): Promise<{ s: CanonicalSetup; r: Receiver }> {
  const platform = await startPlatform({ ...WEBHOOK_TEST_SETTINGS, ...timing });
  return { s: await setupProject(canonicalProject(), { platform }), r: await startReceiver() };
}

describe("webhooks: dead letters and replay", function () {
  this.timeout(90_000);
  let s: CanonicalSetup;
  let r: Receiver;

  before(async () => {
    ({ s, r } = await setupWithReceiver({
      WEBHOOK_BACKOFF_BASE_MS: "100",
      WEBHOOK_BACKOFF_CAP_MS: "300",
      WEBHOOK_RETRY_WINDOW_SECONDS: "1",
    }));
  });
  after(async () => {
    await r.close();
    await s.platform.close();
  });

  it("parks an event past the retry window; an admin inspects it and replays it with the same webhook-id", async () => {
    r.answer(503);
    const created = await s.admin.send("POST", HOOKS, { url: r.url, tables: ["customer"] });
    expect(created.status).to.equal(201);
    r.setSecret(created.body.secret);
    const id = created.body.id as string;
    const dora = await s.api.post(s.key, "customer", { name: "Dora", credit_limit: 5 });
    expect(dora.status, JSON.stringify(dora.body)).to.equal(201);
    await until(
      "a dead letter",
      async () => (await s.admin.send("GET", `${HOOKS}/${id}`)).body.deadLetters === 1,
    );
    const dead = (await s.admin.send("GET", `${HOOKS}/${id}/deadletters`)).body as Row[];
    expect(dead).to.have.length(1);
    expect(dead[0]).to.include({ type: "row.inserted", lastStatus: 503 });
    expect(dead[0]!.attempts).to.be.at.least(2);
    expect(dead[0]!.payload.data.row.name).to.equal("Dora");
    const log = (await s.admin.send("GET", `${HOOKS}/${id}/deliveries`)).body as Row[];
    expect(log[0]).to.include({ outcome: "dead", status: 503, webhookId: dead[0]!.webhookId });
    expect(await attempts(s.platform.dataUrl, "dead")).to.equal(1);

    // A replay of a dead letter that does not exist, or with a malformed id, is 404 and changes nothing.
    const missing = `${dead[0]!.webhookId.replace(/_\d+-/, "_1-")}`;
    expect((await s.admin.send("POST", `${HOOKS}/${id}/deadletters/${missing}/replay`)).status).to.equal(404);
    expect((await s.admin.send("POST", `${HOOKS}/${id}/deadletters/nope/replay`)).status).to.equal(404);

    r.answer(200);
    const before = r.received.length;
    const replay = await s.admin.send("POST", `${HOOKS}/${id}/deadletters/${dead[0]!.webhookId}/replay`);
    expect(replay.body).to.deep.equal({ id, replayed: 1 });
    await until("the replayed event arrives", async () => r.delivered().has(dead[0]!.webhookId));
    const again = r.received.slice(before).filter((d) => d.status === 200);
    expect(again).to.have.length(1);
    expect(again[0]!.signed).to.equal(true);
    expect(again[0]!.body.data.row.name).to.equal("Dora");
    expect((await s.admin.send("GET", `${HOOKS}/${id}/deadletters`)).body).to.deep.equal([]);
    const audit = (await s.admin.send("GET", "/accounts/acme/audit?pagesize=1000")).body as Row[];
    expect(audit.map((e) => e.summary)).to.include(
      `webhook ${id}: dead letter ${dead[0]!.webhookId} replayed`,
    );
  });

  it("replays every dead letter at once, and discards one", async () => {
    r.answer(500);
    const created = await s.admin.send("POST", HOOKS, { url: r.url, tables: ["product"] });
    const id = created.body.id as string;
    for (const name of ["a", "b", "c"]) await s.api.post(s.key, "product", { name, price: 1 });
    await until(
      "three dead letters",
      async () => (await s.admin.send("GET", `${HOOKS}/${id}`)).body.deadLetters === 3,
    );
    const dead = (await s.admin.send("GET", `${HOOKS}/${id}/deadletters`)).body as Row[];
    const discarded = await s.admin.send("DELETE", `${HOOKS}/${id}/deadletters/${dead[0]!.webhookId}`);
    expect(discarded.body).to.deep.equal({ webhookId: dead[0]!.webhookId, deleted: true });
    r.answer(200);
    const replay = await s.admin.send("POST", `${HOOKS}/${id}/deadletters/replay`);
    expect(replay.body).to.deep.equal({ id, replayed: 2 });
    await until("both arrive", async () =>
      dead.slice(1).every((d) => r.delivered().has(d.webhookId as string)),
    );
    expect(r.delivered().has(dead[0]!.webhookId)).to.equal(false);
  });
});

describe("webhooks: a receiver slow to answer one event", function () {
  this.timeout(90_000);
  let s: CanonicalSetup;
  let r: Receiver;

  before(async () => {
    // Longer than the test: the held delivery can only end by the receiver's answer.
    ({ s, r } = await setupWithReceiver({ WEBHOOK_TIMEOUT_MS: "60000", WEBHOOK_CLAIM_IDLE_MS: "120000" }));
  });
  after(async () => {
    await r.close();
    await s.platform.close();
  });

  it("does not hold up the subscription's later events while it waits for the answer", async () => {
    r.answer("hold");
    const created = await s.admin.send("POST", HOOKS, { url: r.url, tables: ["product"], verbs: ["INSERT"] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    r.setSecret(created.body.secret);
    expect((await s.api.post(s.key, "product", { name: "Slow", price: 1 })).status).to.equal(201);
    await until("the first delivery is held", async () => r.held() === 1);
    const [slow] = r.waiting();
    r.answer(200);
    const names = ["Quick 1", "Quick 2", "Quick 3"];
    for (const name of names)
      expect((await s.api.post(s.key, "product", { name, price: 2 })).status).to.equal(201);
    await until("the later events delivered", async () => r.delivered().size === names.length);
    expect(r.waiting(), "the slow delivery still waits for its answer").to.deep.equal([slow]);
    const answered = r.received.filter((d) => d.status === 200);
    expect(answered.map((d) => d.body.data.row.name).sort()).to.deep.equal(names);
    expect(answered.every((d) => d.signed)).to.equal(true);
    r.release(200);
    await until("the slow one delivered too", async () => r.delivered().size === names.length + 1);
    const log = (await s.admin.send("GET", `${HOOKS}/${created.body.id}/deliveries?pagesize=100`))
      .body as Row[];
    expect(log.filter((e) => e.outcome === "delivered")).to.have.length(names.length + 1);
    expect(log.filter((e) => e.outcome !== "delivered")).to.deep.equal([]);
  });
});

describe("webhooks: the egress policy without the operator's loopback switch", function () {
  this.timeout(60_000);

  it("refuses a loopback URL (400/4005) and stores nothing", async () => {
    const s = await setupProject(canonicalProject());
    const r = await startReceiver();
    try {
      for (const url of [r.url, r.url.replace("127.0.0.1", "localhost"), "http://[::1]:9/x"]) {
        const refused = await s.admin.send("POST", HOOKS, { url, tables: ["customer"] });
        expect([refused.status, refused.body.errorCode], url).to.deep.equal([400, 4005]);
        expect(refused.body.errorMessage).to.include("egress policy");
      }
      expect((await s.admin.send("GET", HOOKS)).body).to.deep.equal([]);
    } finally {
      await r.close();
      await s.close();
    }
  });
});
