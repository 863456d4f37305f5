/**
 * Durable write intents: without transactions (FerretDB), a request whose
 * writes were cut off half-way is completed by recovery, whoever notices it:
 *  - the store goes away mid-request for longer than the request's undo
 *    window: the request answers 503, its rows stay locked, and once the store
 *    answers again the recoverer undoes what was applied;
 *  - the process dies in the middle of a commit: a restarted process undoes
 *    what was applied and releases the rows.
 * The platform's own data service recovers only at start-up here (its
 * periodic run is an hour away), so the process under test does the work.
 */
import { expect } from "chai";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { type DataProcess, dataServiceEnv, startDataProcess } from "../../support/data-process.ts";
import { feedEvents } from "../../support/feed.ts";
import { call, projectClient } from "../../support/http.ts";
import { startPlatform } from "../../support/platform.ts";
import { testRedisClient, testStores } from "../../support/stores.ts";
import { MongoProxy } from "./mongo-proxy.ts";
import { expectCutOff, type ProxiedDataService, startProxiedDataService } from "./proxied-data-service.ts";
import {
  type CanonicalSetup,
  type CanonicalState,
  expectLineAccepted,
  type LineFixture,
  loadLineFixture,
  postLine,
  readState,
  recountProblems,
  setupProject,
} from "./support.ts";

/** A metric of a data service (0 when absent). */
async function metric(baseUrl: string, name: string): Promise<number> {
  const page = (await call(baseUrl, "GET", "/metrics")).body as string;
  const line = page.split("\n").find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  return line ? Number(line.split(" ").pop()) : 0;
}

/** The metric once it reached `value` (the recoverer counts right after it released the intent), or at the deadline. */
async function metricWhen(baseUrl: string, name: string, value: number, withinMs = 5000): Promise<number> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const v = await metric(baseUrl, name);
    if (v === value || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Reads the state until `done(state)` or the deadline; returns the last state read. */
async function stateWhen(
  s: CanonicalSetup,
  done: (state: CanonicalState) => boolean,
  withinMs: number,
): Promise<CanonicalState> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const state = await readState(s.api, s.key);
    if (done(state) || Date.now() > deadline) return state;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const hasQty = (state: CanonicalState, qty: number) => state.lineitem.some((li) => li.qty_ordered === qty);

describe("write intents: recovery after a store outage", function () {
  this.timeout(90_000);
  let s: CanonicalSetup;
  let proxied: ProxiedDataService;
  let fixture: LineFixture;

  before(async () => {
    // The platform's writers wait up to 15 s for locked rows (long enough to outlast the outage).
    const platform = await startPlatform({
      WRITE_RECOVERY_INTERVAL_MS: "3600000",
      QUERY_TIMEOUT_MS: "15000",
    });
    s = await setupProject(undefined, { platform });
    proxied = await startProxiedDataService(platform, {
      WRITE_UNDO_WINDOW_MS: 1000,
      WRITE_LEASE_MS: 1000,
      WRITE_RECOVERY_INTERVAL_MS: 200,
    });
    fixture = await loadLineFixture(s);
  });
  after(async () => {
    await proxied.close();
    await s.platform.close();
  });

  it("the store is away longer than the undo window: 503, rows stay locked, recovery undoes the applied writes once the store is back", async () => {
    const viaProxy = projectClient(proxied.baseUrl, "acme", "shop");
    const before = await readState(s.api, s.key);
    // Write 1 (the line item) is applied; the store goes away at write 2 (the order's totals) for 4 s.
    const cutAt = Date.now();
    await expectCutOff(proxied.proxy, { atWrite: 2, outageMs: 4000 }, () =>
      postLine(viaProxy, s.key, fixture, 2),
    );

    // Another writer (the platform's service, which still reaches the store) adds to the same order:
    // it must not build on the half-applied request, so it waits for the rows until recovery is done.
    const other = await postLine(s.api, s.key, fixture, 3);
    expect(other.status, JSON.stringify(other.body)).to.equal(201);
    expect(Date.now() - cutAt, "the other writer waited for the end of the outage").to.be.at.least(4000);
    // Read only now: reads are not isolated from a commit in progress (the other writer's).
    const state = await stateWhen(s, (st) => !hasQty(st, 2), 20_000);
    expect(state.lineitem.filter((li) => li.qty_ordered === 2)).to.deep.equal([]);
    expect(recountProblems(state)).to.deep.equal([]);
    expect(state.lineitem).to.have.length(before.lineitem.length + 1);

    expect(await metric(proxied.baseUrl, "tessera_write_intents_left_total")).to.equal(1);
    expect(await metricWhen(proxied.baseUrl, "tessera_write_intents_recovered_total", 1)).to.equal(1);
    expect(await metric(proxied.baseUrl, "tessera_write_intents_pending")).to.equal(0);

    // The rows are writable through the recovered service again.
    await expectLineAccepted(s, viaProxy, fixture, 4);
  });
});

describe("write intents: recovery after a process dies mid-commit", function () {
  this.timeout(90_000);
  let s: CanonicalSetup;
  let proxy: MongoProxy;
  let redis: RedisClient;
  const children: DataProcess[] = [];

  before(async () => {
    redis = await testRedisClient();
    // The platform's writers give up on locked rows after 1.5 s.
    const platform = await startPlatform({ WRITE_RECOVERY_INTERVAL_MS: "3600000", QUERY_TIMEOUT_MS: "1500" });
    s = await setupProject(undefined, { platform });
    proxy = new MongoProxy((await testStores()).mongoUrl);
  });
  after(async () => {
    for (const c of children) c.child.kill("SIGKILL");
    await proxy.close();
    await s.platform.close();
    await redis.quit();
  });

  it("SIGKILL while a write is held: the rows stay locked; a restarted process undoes the applied writes and frees them", async () => {
    const fixture = await loadLineFixture(s);
    const port = await proxy.listen();
    const env = dataServiceEnv({
      ...s.platform.dataConfig,
      MONGO_URL: `mongodb://127.0.0.1:${port}/?directConnection=true`,
      WRITE_LEASE_MS: 1000,
      WRITE_RECOVERY_INTERVAL_MS: 200,
    });
    const first = await startDataProcess(env);
    children.push(first);
    const before = await readState(s.api, s.key);

    // Write 1 (the line item) reaches the store; write 2 is held while the process is killed.
    const held = proxy.armHold({
      atWrite: 2,
      during: async () => {
        first.child.kill("SIGKILL");
        await first.exited;
      },
    });
    const reply = await postLine(projectClient(first.base, "acme", "shop"), s.key, fixture, 2).catch(
      (err: Error) => err,
    );
    await held;
    expect(reply).to.be.instanceOf(Error);
    const partial = await readState(s.api, s.key);
    expect(hasQty(partial, 2), "the killed request applied its first write").to.equal(true);
    expect(recountProblems(partial)).to.not.deep.equal([]);

    // Nobody may build on the half-applied request: its rows stay locked.
    const blocked = await postLine(s.api, s.key, fixture, 3);
    expect(blocked.status, JSON.stringify(blocked.body)).to.equal(409);
    expect(blocked.body.errorCode).to.equal(4091);

    // The restarted process completes the dead one's intent.
    const second = await startDataProcess(env);
    children.push(second);
    const state = await stateWhen(s, (st) => !hasQty(st, 2), 20_000);
    expect(state).to.deep.equal(before);
    expect(await metricWhen(second.base, "tessera_write_intents_recovered_total", 1)).to.equal(1);
    expect(await metric(second.base, "tessera_write_intents_pending")).to.equal(0);

    // The change feed has no event of the undone write, and the next write's events.
    const feedBefore = await feedEvents(redis, s.platform.dataConfig.REDIS_PREFIX);
    expect(feedBefore.filter((e) => e.row?.qty_ordered === 2)).to.deep.equal([]);
    await expectLineAccepted(s, projectClient(second.base, "acme", "shop"), fixture, 4);
    const added = (await feedEvents(redis, s.platform.dataConfig.REDIS_PREFIX)).slice(feedBefore.length);
    expect(added.filter((e) => e.table === "lineitem").map((e) => e.row?.qty_ordered)).to.deep.equal([4]);
    second.child.kill("SIGTERM");
    expect(await second.exited).to.equal(0);
  });
});
