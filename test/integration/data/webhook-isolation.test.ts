/**
 * A webhook receiver holds only its own subscription (docs/webhooks.md#isolation-and-the-circuit),
 * against real receivers on loopback that hang (accept the request, never answer):
 * - a subscription has at most WEBHOOK_SUBSCRIPTION_CONCURRENCY attempts under way, an account at
 *   most WEBHOOK_ACCOUNT_CONCURRENCY of the process's WEBHOOK_CONCURRENCY: another account's
 *   deliveries go on while one account's receivers hang;
 * - attempts that time out in a row open the subscription's circuit: nothing is sent until one
 *   probe, the admin API shows it (open, half-open, closed), an answered probe closes it and the
 *   events that waited go out;
 * - a 2xx answer is a delivery whatever its body;
 * - a project has at most WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT subscriptions (409/4092).
 */
import { expect } from "chai";
import { startPlatform } from "../../support/platform.ts";
import { until } from "../../support/until.ts";
import { type Receiver, startReceiver, WEBHOOK_TEST_SETTINGS } from "../../support/webhook-receiver.ts";
import { type CanonicalSetup, canonicalProject, type Row, setupProject } from "../rules/support.ts";

const hooksOf = (account: string) => `/accounts/${account}/projects/shop/webhooks`;

/** Subscribes `r` to the project's product inserts; the subscription's id. */
async function subscribe(s: CanonicalSetup, account: string, r: Receiver): Promise<string> {
  const created = await s.admin.send("POST", hooksOf(account), {
    url: r.url,
    tables: ["product"],
    verbs: ["INSERT"],
  });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  r.setSecret(created.body.secret);
  return created.body.id as string;
}

async function insertProducts(s: CanonicalSetup, names: string[]): Promise<void> {
  for (const name of names)
    expect((await s.api.post(s.key, "product", { name, price: 1 })).status).to.equal(201);
}

describe("webhooks: one account's hanging receivers and another account's deliveries", function () {
  this.timeout(120_000);
  let acme: CanonicalSetup;
  let beta: CanonicalSetup;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  before(async () => {
    const platform = await startPlatform({
      ...WEBHOOK_TEST_SETTINGS,
      WEBHOOK_CONCURRENCY: "4",
      WEBHOOK_ACCOUNT_CONCURRENCY: "3",
      WEBHOOK_SUBSCRIPTION_CONCURRENCY: "2",
      // Longer than the test: a hanging attempt holds its place until the end.
      WEBHOOK_TIMEOUT_MS: "60000",
      WEBHOOK_CLAIM_IDLE_MS: "120000",
      WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT: "3",
    });
    acme = await setupProject(canonicalProject(), { platform, account: "acme" });
    beta = await setupProject(canonicalProject(), { platform, account: "beta" });
  });
  after(async () => {
    for (const r of receivers) {
      r.release(200);
      await r.close();
    }
    await acme?.platform.close();
  });

  it("a hanging subscription holds its own limit, its account its share; the other account's events arrive", async () => {
    const first = await receiver();
    const second = await receiver();
    first.answer("hold");
    second.answer("hold");
    await subscribe(acme, "acme", first);
    await subscribe(acme, "acme", second);
    await insertProducts(
      acme,
      Array.from({ length: 8 }, (_, i) => `hangs ${i}`),
    );
    // Each subscription takes 2 at most, the account 3 of the process's 4.
    const hanging = () => first.waiting().length + second.waiting().length;
    await until("the account's share of attempts hangs", async () => hanging() >= 3);

    const fast = await receiver();
    await subscribe(beta, "beta", fast);
    const names = ["quick 1", "quick 2", "quick 3"];
    await insertProducts(beta, names);
    await until("the other account's events delivered", async () => fast.delivered().size === names.length);
    expect(fast.received.filter((d) => d.status === 200).map((d) => d.body.data.row.name)).to.have.members(
      names,
    );
    expect(fast.received.every((d) => d.signed)).to.equal(true);
    expect(hanging(), "no more of the hanging account's attempts than its share").to.equal(3);
    expect(first.waiting().length, "a subscription's own limit").to.be.within(1, 2);
    expect(second.waiting().length, "a subscription's own limit").to.be.within(1, 2);
    expect(first.received.length + second.received.length).to.equal(3);
  });

  it("refuses a subscription past the project's limit (409/4092 naming it), also when they arrive together", async () => {
    const r = await receiver();
    const gamma = await setupProject(canonicalProject(), { platform: acme.platform, account: "gamma" });
    const posts = await Promise.all(
      Array.from({ length: 6 }, () =>
        gamma.admin.send("POST", hooksOf("gamma"), { url: r.url, tables: ["customer"] }),
      ),
    );
    const statuses = posts.map((p) => p.status).sort();
    expect(statuses).to.deep.equal([201, 201, 201, 409, 409, 409]);
    for (const refused of posts.filter((p) => p.status === 409)) {
      expect(refused.body).to.include({ statusCode: 409, errorCode: 4092, limit: 3 });
      expect(refused.body.errorMessage).to.include("WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT").and.include("3");
    }
    const listed = (await gamma.admin.send("GET", hooksOf("gamma"))).body as Row[];
    expect(listed).to.have.length(3);
    // One deleted: one more may be made.
    expect((await gamma.admin.send("DELETE", `${hooksOf("gamma")}/${listed[0]!.id}`)).status).to.equal(200);
    const again = await gamma.admin.send("POST", hooksOf("gamma"), { url: r.url, tables: ["customer"] });
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
  });
});

describe("webhooks: the circuit of a subscription whose attempts time out", function () {
  this.timeout(120_000);
  let s: CanonicalSetup;
  let r: Receiver;

  before(async () => {
    const platform = await startPlatform({
      ...WEBHOOK_TEST_SETTINGS,
      WEBHOOK_SUBSCRIPTION_CONCURRENCY: "2",
      WEBHOOK_TIMEOUT_MS: "3000",
      WEBHOOK_CLAIM_IDLE_MS: "8000",
      WEBHOOK_CIRCUIT_TIMEOUTS: "3",
      WEBHOOK_CIRCUIT_OPEN_MS: "2000",
      WEBHOOK_BACKOFF_BASE_MS: "100",
      WEBHOOK_BACKOFF_CAP_MS: "4000",
      WEBHOOK_RETRY_WINDOW_SECONDS: "600",
    });
    s = await setupProject(canonicalProject(), { platform });
    r = await startReceiver();
  });
  after(async () => {
    r?.release(200);
    await r?.close();
    await s?.platform.close();
  });

  it("opens after time-outs in a row, sends one probe after the cool-down, closes when it is answered", async () => {
    r.answer("hold");
    const id = await subscribe(s, "acme", r);
    const view = async () => (await s.admin.send("GET", `${hooksOf("acme")}/${id}`)).body as Row;
    expect((await view()).circuit).to.deep.equal({
      state: "closed",
      timeoutsInARow: 0,
      opened: null,
      nextProbe: null,
    });
    const names = Array.from({ length: 6 }, (_, i) => `waits ${i}`);
    await insertProducts(s, names);

    await until("the circuit opens", async () => (await view()).circuit.state === "open");
    const opened = (await view()).circuit;
    expect(opened.timeoutsInARow).to.be.at.least(3);
    const nextProbe = Date.parse(opened.nextProbe);
    expect(nextProbe).to.be.above(Date.parse(opened.opened));
    const listed = ((await s.admin.send("GET", hooksOf("acme"))).body as Row[]).find((h) => h.id === id)!;
    expect(listed.circuit.state).to.equal("open");
    // Every attempt under way when it opened has arrived; from here on, nothing but one probe.
    const sent = r.received.length;
    expect(sent).to.be.within(3, 4);

    await until("the probe is under way", async () => (await view()).circuit.state === "half-open");
    await until("the probe arrives", async () => r.received.length === sent + 1);
    expect(r.received.at(-1)!.at, "not before the cool-down's end").to.be.at.least(nextProbe - 50);
    await until("the unanswered probe opens it again", async () => {
      const c = (await view()).circuit;
      return c.state === "open" && c.opened !== opened.opened;
    });
    expect(r.received.length).to.equal(sent + 1);

    // The receiver answers again: the next probe closes the circuit and every event goes out.
    r.answer(200);
    await until("every event delivered", async () => r.delivered().size === names.length, 60_000);
    const closed = (await view()).circuit;
    expect(closed).to.deep.equal({ state: "closed", timeoutsInARow: 0, opened: null, nextProbe: null });
    const delivered = r.received.filter((d) => d.status === 200);
    expect(delivered.map((d) => d.body.data.row.name)).to.have.members(names);
    expect(delivered.every((d) => d.signed)).to.equal(true);
    const log = (await s.admin.send("GET", `${hooksOf("acme")}/${id}/deliveries?pagesize=100`)).body as Row[];
    expect(log.filter((e) => e.outcome === "delivered")).to.have.length(names.length);
    expect(log.filter((e) => e.outcome === "failed").every((e) => /within 3000 ms/.test(e.error))).to.equal(
      true,
    );
  });

  it("a 2xx answer is a delivery whatever its body (larger than 64 KiB, not the JSON it says it is)", async () => {
    r.release(200);
    const bodies = [
      { body: Buffer.alloc(200 * 1024, "x"), contentType: "application/octet-stream" },
      { body: "this is not JSON", contentType: "application/json" },
      { body: `{"truncated": "${"y".repeat(100 * 1024)}`, contentType: "application/json" },
    ];
    for (const [i, body] of bodies.entries()) {
      const receiving = await startReceiver();
      try {
        receiving.answer(200, body);
        const id = await subscribe(s, "acme", receiving);
        await insertProducts(s, [`answered ${i}`]);
        await until("the event delivered", async () => receiving.delivered().size === 1);
        const log = async () =>
          (await s.admin.send("GET", `${hooksOf("acme")}/${id}/deliveries`)).body as Row[];
        await until("its attempt logged", async () => (await log()).length > 0);
        expect((await log()).map((e) => [e.outcome, e.attempt, e.status])).to.deep.equal([
          ["delivered", 1, 200],
        ]);
        expect(receiving.received).to.have.length(1);
        expect((await s.admin.send("DELETE", `${hooksOf("acme")}/${id}`)).status).to.equal(200);
      } finally {
        await receiving.close();
      }
    }
  });
});
