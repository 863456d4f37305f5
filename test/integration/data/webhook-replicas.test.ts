/**
 * Webhook delivery shared by data replicas (docs/webhooks.md): two real
 * data-service processes consume one subscription's group; each event reaches
 * the receiver once while both live, and when one is killed (SIGKILL) holding
 * deliveries, the other takes them over (XAUTOCLAIM after WEBHOOK_CLAIM_IDLE_MS,
 * 21 s here: longer than a held delivery's time limit): every event arrives.
 */
import { expect } from "chai";
import { webhookIdOf } from "../../../services/data/src/hooks/payload.ts";
import { groupOf } from "../../../services/data/src/store/webhook-store.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { type DataProcess, dataServiceEnv, startDataProcess } from "../../support/data-process.ts";
import { call } from "../../support/http.ts";
import { startPlatform } from "../../support/platform.ts";
import { keysMatching, testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";
import { type Receiver, startReceiver, WEBHOOK_TEST_SETTINGS } from "../../support/webhook-receiver.ts";
import { type CanonicalSetup, canonicalProject, postLine, setupProject } from "../rules/support.ts";

/** A product, a customer and an order for line items (each write checked). */
async function lineFixture(s: CanonicalSetup): Promise<{ product: number; order: number }> {
  const product = await s.api.post(s.key, "product", { name: "Widget", price: 10 });
  expect(product.status, JSON.stringify(product.body)).to.equal(201);
  const customer = await s.api.post(s.key, "customer", { name: "Alpha", credit_limit: 1_000_000 });
  expect(customer.status, JSON.stringify(customer.body)).to.equal(201);
  const order = await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" });
  expect(order.status, JSON.stringify(order.body)).to.equal(201);
  return { product: product.body.txsummary[0].product_number, order: order.body.txsummary[0].order_number };
}

/** A flat Redis reply of names and values (`[name, value, name, value, …]`) as a map. */
const fieldMap = <T>(flat: T[]) => new Map(flat.flatMap((v, i) => (i % 2 ? [] : [[v, flat[i + 1]]])));

/** The events of `feed` after the last one `group` handed out to a consumer: what none of them has read. */
async function unreadEvents(redis: RedisClient, feed: string, group: string): Promise<Map<string, string>[]> {
  const groups = (await redis.xinfo("GROUPS", feed)) as (string | number)[][];
  const last = groups
    .map(fieldMap)
    .find((g) => g.get("name") === group)
    ?.get("last-delivered-id");
  expect(last, `group ${group} on ${feed}`).to.be.a("string");
  return (await redis.xrange(feed, `(${last}`, "+")).map(
    ([, fields]) => fieldMap(fields) as Map<string, string>,
  );
}

describe("webhooks across replicas", function () {
  this.timeout(180_000);
  let s: CanonicalSetup;
  let receiver: Receiver;
  const replicas: DataProcess[] = [];

  before(async () => {
    // The in-process service serves the APIs but delivers nothing: the two replicas below do.
    const platform = await startPlatform({
      ...WEBHOOK_TEST_SETTINGS,
      WEBHOOK_DELIVERY: "false",
      WEBHOOK_BACKOFF_BASE_MS: "50",
      WEBHOOK_BACKOFF_CAP_MS: "200",
      // Long enough that no held delivery times out on a loaded machine before the kill.
      WEBHOOK_TIMEOUT_MS: "20000",
      WEBHOOK_CLAIM_IDLE_MS: "21000",
    });
    s = await setupProject(canonicalProject(), { platform });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    for (const r of replicas) await r.cleanup();
    await s?.platform.close();
  });

  it("a replica killed mid-delivery loses no event", async () => {
    const { product, order } = await lineFixture(s);
    receiver.answer("hold");
    const created = await s.admin.send("POST", "/accounts/acme/projects/shop/webhooks", {
      url: receiver.url,
      tables: ["lineitem"],
      verbs: ["INSERT"],
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    receiver.setSecret(created.body.secret);
    const events = 12;
    for (let qty = 1; qty <= events; qty++)
      expect((await postLine(s.api, s.key, { order, product }, qty)).status).to.equal(201);
    // The replicas start once every event waits in the subscription's group, so that one round of
    // one of them takes all 12. (Started before, a replica could take the first events while the
    // rest were still being written; its round then holds those until they time out, and the
    // rest come later — on a loaded machine, after some of the first were sent again.)
    const env = { ...dataServiceEnv(s.platform.dataConfig), WEBHOOK_DELIVERY: "true" };
    replicas.push(...(await Promise.all([startDataProcess(env), startDataProcess(env)])));
    await until("every event is held by a replica", async () => receiver.held() === events, 60_000);
    // The normal case: each event was handed to one replica, once.
    expect(new Set(receiver.received.map((d) => d.id)).size).to.equal(events);

    // Which replica holds which deliveries: the group's pending entries by consumer (`<host>-<pid>-…`).
    const redis = await testRedisClient();
    let victim: DataProcess;
    /** The deliveries the victim was handed and holds (their ids: the subscription and the feed position). */
    let victimHolds: Set<string>;
    try {
      const [feed] = await keysMatching(redis, `${s.platform.dataConfig.REDIS_PREFIX}feed:*`);
      const [, , , consumers] = (await redis.xpending(feed!, groupOf(created.body.id))) as [
        number,
        string,
        string,
        [string, string][],
      ];
      const holding = consumers
        .filter(([, n]) => Number(n) > 0)
        .map(([name]) => ({ name, pid: Number(name.split("-").at(-2)) }));
      victim = replicas.find((r) => holding.some((h) => h.pid === r.pid))!;
      expect(victim, JSON.stringify(consumers)).to.not.equal(undefined);
      const consumer = holding.find((h) => h.pid === victim.pid)!.name;
      const entries = (await redis.xpending(feed!, groupOf(created.body.id), "-", "+", 100, consumer)) as [
        string,
      ][];
      victimHolds = new Set(entries.map(([position]) => webhookIdOf(created.body.id, position)));
      expect(victimHolds.size).to.be.greaterThan(0);
    } finally {
      redis.disconnect();
    }
    victim.child.kill("SIGKILL");
    await victim.exited;
    // Answer only what a live replica waits for: first the receiver sees the killed replica's
    // requests close. An answer written into one of them reaches no one, yet would count as a
    // delivery: the test would pass without the takeover, and leave the killed replica's
    // entries pending for the next test.
    await until("the receiver sees the killed replica's requests closed", async () =>
      receiver.waiting().every((id) => !victimHolds.has(id)),
    );
    receiver.answer(200);
    receiver.release(200);
    await until("every event is delivered", async () => receiver.delivered().size === events, 60_000);
    expect(receiver.received.every((d) => d.signed)).to.equal(true);
    const qtys = receiver.received.filter((d) => d.status === 200).map((d) => d.body.data.row.qty_ordered);
    expect([...new Set(qtys)].sort((a, b) => a - b)).to.deep.equal(
      Array.from({ length: events }, (_, i) => i + 1),
    );
  });

  it("events the feed trimmed before any replica read them are counted and logged, not lost silently", async () => {
    for (const r of replicas)
      if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
    await Promise.all(replicas.map((r) => r.exited));
    const [hook] = (await s.admin.send("GET", "/accounts/acme/projects/shop/webhooks")).body;
    const product = await s.api.post(s.key, "product", { name: "Gadget", price: 1 });
    expect(product.status, JSON.stringify(product.body)).to.equal(201);
    const order = await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" });
    expect(order.status, JSON.stringify(order.body)).to.equal(201);
    const line = {
      order: order.body.txsummary[0].order_number,
      product: product.body.txsummary[0].product_number,
    };
    for (let qty = 1; qty <= 5; qty++) expect((await postLine(s.api, s.key, line, qty)).status).to.equal(201);
    // What retention does when it is shorter than the subscription's backlog: the unread events go.
    // Unread: every event of the project's feed since the subscription's last read, the 5 line
    // items among them (and the product, the order and the rows their rules changed).
    const redis = await testRedisClient();
    let unread: number;
    try {
      const [feed] = await keysMatching(redis, `${s.platform.dataConfig.REDIS_PREFIX}feed:*`);
      const events = await unreadEvents(redis, feed!, groupOf(hook.id));
      const lineItems = events.filter((e) => e.get("table") === "lineitem" && e.get("verb") === "INSERT");
      expect(lineItems, "the line items among the unread events").to.have.length(5);
      unread = events.length;
      await redis.xtrim(feed!, "MAXLEN", 0);
    } finally {
      redis.disconnect();
    }
    const next = await startDataProcess({
      ...dataServiceEnv(s.platform.dataConfig),
      WEBHOOK_DELIVERY: "true",
    });
    replicas.push(next);
    const trimmed = async () => {
      const page = (await call(next.base, "GET", "/metrics")).body as string;
      const line = page.split("\n").find((l) => l.startsWith("tessera_webhook_events_trimmed_total"));
      return Number(line?.split(" ").pop() ?? 0);
    };
    // Each step of the counter comes with a "lost" entry of the log. Besides the unread events,
    // they may count, in a step of their own before or after, events the first test's replicas
    // were handed and never acknowledged (killed before their XACK) that the trim took: the new
    // process finds them gone when it takes them over (XAUTOCLAIM). So: wait until the log
    // accounts for every event the counter counts, and for the unread events at least.
    type Entry = { outcome: string; error: string };
    let lost: Entry[] = [];
    const logged = () => lost.reduce((n, e) => n + Number(/^(\d+)/.exec(e.error)?.[1] ?? Number.NaN), 0);
    await until("every trimmed event counted and logged, the unread ones among them", async () => {
      const log = (await s.admin.send("GET", `/accounts/acme/projects/shop/webhooks/${hook.id}/deliveries`))
        .body as Entry[];
      lost = log.filter((e) => e.outcome === "lost");
      return logged() >= unread && logged() === (await trimmed());
    });
    for (const e of lost) expect(e.error).to.match(/^\d+ event\(s\) of the project's feed were trimmed/);
  });
});
