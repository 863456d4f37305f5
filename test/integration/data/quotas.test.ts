/**
 * Plans and quotas as a hostile tenant meets them, on real processes (two
 * data-service processes, the gateway, FerretDB, Redis): writers racing past a
 * row limit, an account at its byte quota beside one that keeps writing,
 * deleting to get back under, the count limits of admin changes, and the usage
 * answer, the API keys a project's logins mint and its webhook subscriptions. Nothing is ever
 * half-written: a refused batch leaves none of its rows.
 */
import { expect } from "chai";
import { ErrorCode } from "../../../shared/errors.ts";
import { rowCountsKey } from "../../../shared/redis/key-layout.ts";
import { adminKey, putAdmin } from "../../support/admins.ts";
import { type DataProcess, dataServiceEnv, startDataProcess } from "../../support/data-process.ts";
import { ITEM_PROJECT } from "../../support/definitions.ts";
import { adminClient, call, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { openSse } from "../../support/sse.ts";
import { keysMatching, testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";

const ROW_LIMIT = 30;
const BYTE_LIMIT = 200_000;
const PLANS = {
  small: { rowsPerTable: ROW_LIMIT, projects: 2, tablesPerProject: 3, usersPerProject: 2, liveStreams: 1 },
  bytes: { storedBytes: BYTE_LIMIT },
  keys: { apiKeysPerProject: 4, webhooksPerProject: 2 },
  /** The plan's webhook limit above the deployment's (WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT: 3). */
  hooks: { webhooksPerProject: 10 },
};
const DEPLOYMENT_WEBHOOKS = 3;

describe("plans and quotas (hostile tenants, real processes)", function () {
  this.timeout(120_000);
  let platform: Platform;
  let second: DataProcess;
  let admin: ReturnType<typeof adminClient>;
  let seq = 0;

  before(async () => {
    platform = await startPlatform({
      PLANS: JSON.stringify(PLANS),
      PLAN_CACHE_MS: "0",
      USAGE_FLUSH_MS: "200",
      USAGE_SAMPLE_SECONDS: "3600",
      WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT: String(DEPLOYMENT_WEBHOOKS),
      SANDBOX_ALLOW_LOOPBACK_FETCH: "true",
    });
    second = await startDataProcess(dataServiceEnv(platform.dataConfig));
    admin = adminClient(platform.baseUrl, platform.adminToken);
  });

  after(async () => {
    await second?.cleanup();
    await platform?.close();
  });

  /** A new account on `plan` with project `shop` and a key of full access. */
  async function account(plan?: string) {
    const name = `q${++seq}`;
    expect((await admin.putAccount(name)).status).to.equal(201);
    if (plan) expect((await admin.send("PUT", `/accounts/${name}/plan`, { plan })).status).to.equal(200);
    expect((await admin.putProject(name, "shop", ITEM_PROJECT)).status).to.equal(201);
    const key = await admin.keyWith(name, "shop", ["Full access"]);
    return { name, key };
  }

  /** A data-API client of one of the two processes (they share Redis and the store). */
  const via = (account: string, n: number) =>
    projectClient(n % 2 === 0 ? platform.dataUrl : second.base, account, "shop");

  async function ids(account: string, key: string): Promise<Set<string>> {
    const found = new Set<string>();
    for (let offset = 0; ; offset += 100) {
      const r = await via(account, 0).get(key, `item?pagesize=100&offset=${offset}`);
      expect(r.status).to.equal(200);
      const rows = (r.body as { id?: string }[]).filter((row) => row.id !== undefined);
      for (const row of rows) found.add(row.id!);
      if (rows.length < 100) return found;
    }
  }

  /** The account's database, row counts and pending intents, as Redis holds them. */
  async function redisState(account: string) {
    const redis = await testRedisClient();
    const doc = await platform.data.deps.meta.getAccount(account);
    const database = platform.data.deps.meta.accountDatabase(doc!);
    const prefix = platform.dataConfig.REDIS_PREFIX;
    const counts = await redis.hgetall(rowCountsKey(prefix, database));
    const intents = await keysMatching(redis, `${prefix}intent:{${database}}:*`);
    redis.disconnect();
    return { counts, intents };
  }

  it("20 writers racing past a row limit over two processes: exactly the limit stored, every refusal 403/4032 whole", async () => {
    const { name, key } = await account("small");
    // 20 rows first, then 20 writers, each posting batches of 2 rows until it is refused.
    for (let i = 0; i < 20; i++)
      expect((await via(name, i).post(key, "item", { id: `pre${i}` })).status).to.equal(201);
    const batches: { ids: string[]; reply: Reply }[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        // Bounded: 20 × 5 batches of 2 rows go far past the 10 rows left, limit or not.
        for (let round = 0; round < 5; round++) {
          const batch = [`w${w}r${round}a`, `w${w}r${round}b`];
          const reply = await via(name, w + round).post(
            key,
            "item",
            batch.map((id) => ({ id })),
          );
          batches.push({ ids: batch, reply });
          if (reply.status !== 201) return;
        }
      }),
    );
    const stored = await ids(name, key);
    // The documented bound: no overshoot at all (the check and the reservation are one step).
    expect(stored.size).to.equal(ROW_LIMIT);
    for (const { ids: batch, reply } of batches) {
      const present = batch.filter((id) => stored.has(id)).length;
      if (reply.status === 201) expect(present, JSON.stringify(reply.body)).to.equal(2);
      else {
        expect(present, "a refused batch leaves nothing").to.equal(0);
        expect(reply.status).to.equal(403);
        expect(reply.body.errorCode).to.equal(ErrorCode.quotaExceeded);
        expect(reply.body.quota).to.include({ limit: "rowsPerTable", value: ROW_LIMIT, plan: "small" });
        expect(reply.body.quota.used).to.be.within(ROW_LIMIT - 1, ROW_LIMIT);
        expect(reply.body.errorMessage).to.include("'item'");
      }
    }
    const state = await redisState(name);
    expect(state.intents, "no write intent left behind").to.deep.equal([]);
    expect(Object.values(state.counts).map(Number)).to.deep.equal([ROW_LIMIT]);
  });

  it("reads, updates and deletes work at the limit; deleting rows makes room again", async () => {
    const { name, key } = await account("small");
    for (let i = 0; i < ROW_LIMIT; i++)
      expect((await via(name, i).post(key, "item", { id: `r${i}` })).status).to.equal(201);
    expect((await via(name, 0).post(key, "item", { id: "over" })).status).to.equal(403);
    expect((await via(name, 1).get(key, "item/r1")).status).to.equal(200);
    expect(
      (await via(name, 0).put(key, "item/r1", { note: "x", "@metadata": { checksum: "override" } })).status,
    ).to.equal(200);
    for (let i = 0; i < 3; i++)
      expect((await via(name, i).delete(key, `item/r${i}?checksum=override`)).status).to.equal(200);
    for (let i = 0; i < 3; i++)
      expect((await via(name, i).post(key, "item", { id: `again${i}` })).status).to.equal(201);
    const refused = await via(name, 1).post(key, "item", { id: "again3" });
    expect(refused.status).to.equal(403);
    expect((await ids(name, key)).size).to.equal(ROW_LIMIT);
    // The operator's recount finds what the counts say.
    const recount = await admin.send("POST", `/accounts/${name}/usage/recount`);
    expect(recount.status).to.equal(200);
    expect(recount.body.rows).to.equal(ROW_LIMIT);
  });

  it("an account at its byte quota cannot write while another keeps writing; deleting brings it back", async () => {
    const full = await account("bytes");
    const other = await account();
    const note = "x".repeat(2000);
    // Fill past the quota, measuring as the tenant would after each batch.
    let written = 0;
    for (;;) {
      const batch = Array.from({ length: 20 }, (_, i) => ({ id: `b${written + i}`, note }));
      const r = await via(full.name, written).post(full.key, "item", batch);
      if (r.status === 403) break;
      expect(r.status).to.equal(201);
      written += batch.length;
      const measured = await admin.send("POST", `/accounts/${full.name}/usage/measure`);
      expect(measured.status).to.equal(200);
    }
    // From now on: the full account is refused, the other one keeps writing as before.
    for (let i = 0; i < 20; i++) {
      const refused = await via(full.name, i).post(full.key, "item", { id: `more${i}` });
      expect(refused.status).to.equal(403);
      expect(refused.body.quota).to.include({ limit: "storedBytes", value: BYTE_LIMIT, plan: "bytes" });
      expect(refused.body.quota.used).to.be.at.least(BYTE_LIMIT);
      expect((await via(other.name, i).post(other.key, "item", { id: `o${i}`, note })).status).to.equal(201);
    }
    expect((await via(full.name, 0).get(full.key, "item?pagesize=5")).status).to.equal(200);
    // Deleting is always allowed; once measured again the account writes again.
    for (let i = 0; i < written / 2; i++)
      expect((await via(full.name, i).delete(full.key, `item/b${i}?checksum=override`)).status).to.equal(200);
    const ann = await tenantAdmin(full.name);
    expect(
      (
        await call(platform.baseUrl, "POST", `/admin/v1/accounts/${full.name}/usage/measure`, {
          headers: ann,
        })
      ).status,
    ).to.equal(200);
    expect((await via(full.name, 1).post(full.key, "item", { id: "back" })).status).to.equal(201);
  });

  /** An administrator of the account, logged in: her Authorization header. */
  async function tenantAdmin(account: string, role: "admin" | "reader" = "admin") {
    await putAdmin(admin, account, `ann-${role}`, role, "ann-password-1");
    return {
      authorization: `Bearer ${await adminKey(platform.baseUrl, account, `ann-${role}`, "ann-password-1")}`,
    };
  }

  it("count limits of admin changes: projects (also when created at once), tables, users", async () => {
    const { name } = await account("small");
    const creations = await Promise.all(
      ["p1", "p2", "p3"].map((p) => admin.putProject(name, p, ITEM_PROJECT)),
    );
    // `shop` and one more: the limit is 2, however many are created at once.
    expect(creations.map((r) => r.status).sort()).to.deep.equal([201, 403, 403]);
    const refused = creations.find((r) => r.status === 403)!;
    expect(refused.body.errorCode).to.equal(ErrorCode.quotaExceeded);
    expect(refused.body.quota).to.deep.equal({ limit: "projects", value: 2, used: 2, plan: "small" });
    const tables = Object.fromEntries(["a", "b", "c", "d"].map((t) => [t, ITEM_PROJECT.tables.item]));
    const tooMany = await admin.putProject(name, "shop", { ...ITEM_PROJECT, tables });
    expect(tooMany.status).to.equal(403);
    expect(tooMany.body.quota).to.include({ limit: "tablesPerProject", value: 3, used: 1 });
    const user = (u: string) =>
      admin.putUser(name, "shop", u, { password: "a-password-1", roles: ["Full access"] });
    expect((await user("u1")).status).to.equal(201);
    expect((await user("u2")).status).to.equal(201);
    const third = await user("u3");
    expect(third.status).to.equal(403);
    expect(third.body.quota).to.include({ limit: "usersPerProject", value: 2, used: 2 });
    expect((await user("u1")).status, "changing a user is no new user").to.equal(200);
  });

  it("a plan's live-query limit replaces the configured one; the open time is metered", async () => {
    const { name, key } = await account("small");
    const url = `${platform.dataUrl}${via(name, 0).root}/item`;
    const first = await openSse(url, { authorization: `Tessera ${key}:1` });
    expect(first.status).to.equal(200);
    await first.next((e) => e.event === "snapshot");
    const second = await openSse(url, { authorization: `Tessera ${key}:1` });
    expect(second.status).to.equal(429);
    expect(second.body.errorCode).to.equal(ErrorCode.tooManyStreams);
    first.close();
    await until("the stream's time is counted", async () => {
      const usage = await admin.send("GET", `/accounts/${name}/usage?step=1h`);
      const minutes = usage.body.series.points.reduce(
        (sum: number, p: { liveStreamMinutes: number }) => sum + p.liveStreamMinutes,
        0,
      );
      return (
        minutes > 0 &&
        usage.body.series.points.some(
          (p: { requests: { stream: { "2xx": number } } }) => p.requests.stream["2xx"] === 1,
        )
      );
    });
  });

  it("the usage answer: the tenant's own requests, storage, limits and warnings; nobody else's", async () => {
    const { name, key } = await account("small");
    for (let i = 0; i < 25; i++) await via(name, i).post(key, "item", { id: `u${i}` });
    for (let i = 0; i < 3; i++) await via(name, i).get(key, "item?pagesize=5");
    expect((await via(name, 0).get(key, "item?filter=nosuchcolumn%3D1")).status).to.equal(400);
    const reader = await tenantAdmin(name, "reader");
    await admin.send("POST", `/accounts/${name}/usage/measure`);
    let usage: Reply = await call(platform.baseUrl, "GET", `/admin/v1/accounts/${name}/usage?step=1h`, {
      headers: reader,
    });
    await until("the requests are counted", async () => {
      usage = await call(platform.baseUrl, "GET", `/admin/v1/accounts/${name}/usage?step=1h`, {
        headers: reader,
      });
      const total = (kind: string, cls: string) =>
        usage.body.series.points.reduce(
          (sum: number, p: { requests: Record<string, Record<string, number>> }) =>
            sum + p.requests[kind]![cls]!,
          0,
        );
      return total("write", "2xx") === 25 && total("read", "2xx") === 3 && total("read", "4xx") === 1;
    });
    expect(usage.status).to.equal(200);
    expect(usage.body).to.include({ account: name, plan: "small" });
    expect(usage.body.limits.rowsPerTable).to.equal(ROW_LIMIT);
    expect(usage.body.current.byProject.shop.byTable.item.rows).to.equal(25);
    expect(usage.body.current.storedBytes).to.be.greaterThan(0);
    // The last 24 hours by the hour: `from` moves back to the start of its hour.
    expect(usage.body.series.points.length).to.be.within(24, 25);
    // 25 of 30 rows: a warning (80 % or more); 1 of 2 projects: none.
    expect(usage.body.warnings).to.deep.include({
      limit: "rowsPerTable",
      state: "warning",
      used: 25,
      value: ROW_LIMIT,
      project: "shop",
      table: "item",
    });
    expect(usage.body.warnings.map((w: { limit: string }) => w.limit)).to.not.include("projects");
    const stranger = await account();
    const outsider = await tenantAdmin(stranger.name);
    const hidden = await call(platform.baseUrl, "GET", `/admin/v1/accounts/${name}/usage`, {
      headers: outsider,
    });
    expect(hidden.status).to.equal(404);
    const bad = await call(platform.baseUrl, "GET", `/admin/v1/accounts/${name}/usage?step=30s`, {
      headers: reader,
    });
    expect(bad.status).to.equal(400);
    const noPlanChange = await call(platform.baseUrl, "PUT", `/admin/v1/accounts/${name}/plan`, {
      headers: await tenantAdmin(name),
      body: { plan: "unlimited" },
    });
    expect(noPlanChange.status).to.equal(403);
  });

  /** Every 403 of `replies` is 4032 with this `quota` body. */
  function expectQuotaRefusals(replies: Reply[], quota: Record<string, unknown>) {
    for (const refused of replies.filter((r) => r.status === 403)) {
      expect(refused.body.errorCode).to.equal(ErrorCode.quotaExceeded);
      expect(refused.body.quota).to.deep.equal(quota);
    }
  }

  /** The usage answer shows `shop` using `value` of the limit, and warns that it is full. */
  async function expectFullInUsage(account: string, limit: string, field: string, value: number) {
    const usage = await admin.send("GET", `/accounts/${account}/usage`);
    expect(usage.body.current.byProject.shop[field]).to.equal(value);
    expect(usage.body.warnings).to.deep.include({
      limit,
      state: "full",
      used: value,
      value,
      project: "shop",
    });
  }

  it("API keys per project: logins at once mint no more than the plan allows; disabled, deleted and expired keys make room", async () => {
    const { name } = await account("keys");
    const api = projectClient(platform.baseUrl, name, "shop");
    const users = Array.from({ length: 8 }, (_, i) => `u${i}`);
    for (const u of users)
      expect(
        (await admin.putUser(name, "shop", u, { password: "a-password-1", roles: ["Full access"] })).status,
      ).to.equal(201);
    expect(
      (
        await admin.putUser(name, "shop", "brief", {
          password: "a-password-1",
          roles: ["Full access"],
          keyLifetimeSeconds: 1,
        })
      ).status,
    ).to.equal(201);
    const login = (u: string) => api.login({ username: u, password: "a-password-1" });
    // The manual key account() made counts: 3 more, however many logins arrive together.
    const logins = await Promise.all(users.map(login));
    const statuses = logins.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(logins.map((r) => r.body))).to.deep.equal([
      200, 200, 200, 403, 403, 403, 403, 403,
    ]);
    expectQuotaRefusals(logins, { limit: "apiKeysPerProject", value: 4, used: 4, plan: "keys" });
    const manual = await admin.createKey(name, "shop", { name: "one more", roles: ["Full access"] });
    expect(manual.status).to.equal(403);
    expect(manual.body.quota).to.include({ limit: "apiKeysPerProject", value: 4, used: 4 });
    // The usage answer counts them and warns.
    await expectFullInUsage(name, "apiKeysPerProject", "apiKeys", 4);
    // A logout (disable) makes room at once.
    const minted = logins.filter((r) => r.status === 200).map((r) => r.body.apikey as string);
    expect((await api.login({ apikey: minted[0], disable: true })).status).to.equal(200);
    const brief = await login("brief");
    expect(brief.status, JSON.stringify(brief.body)).to.equal(200);
    expect((await login("u0")).status).to.equal(403);
    // An expired key no longer counts.
    await until(
      "the short key expired",
      async () => (await api.login({ apikey: brief.body.apikey })).body?.errorCode === 4013,
    );
    expect((await login("u0")).status).to.equal(200);
    expect((await login("u1")).status).to.equal(403);
    // Deleting a key makes room too.
    const listed = (await admin.listKeys(name, "shop")).body as { id: string; kind: string }[];
    const manualKey = listed.find((k) => k.kind === "manual")!;
    expect((await admin.deleteKey(name, "shop", manualKey.id)).status).to.equal(200);
    expect((await admin.createKey(name, "shop", { name: "again", roles: ["Full access"] })).status).to.equal(
      201,
    );
    const keysInForce = async () =>
      (await admin.send("GET", `/accounts/${name}/usage`)).body.current.byProject.shop.apiKeys;
    expect(await keysInForce()).to.equal(4);
    // A project deleted and created again starts with none: its keys went with it.
    expect((await admin.send("DELETE", `/accounts/${name}/projects/shop`)).status).to.equal(200);
    expect((await admin.putProject(name, "shop", ITEM_PROJECT)).status).to.equal(201);
    expect(await keysInForce()).to.equal(0);
    for (let i = 0; i < 4; i++)
      expect(
        (await admin.createKey(name, "shop", { name: `k${i}`, roles: ["Full access"] })).status,
      ).to.equal(201);
  });

  it("webhook subscriptions: the smaller of the plan's limit (403/4032) and the deployment's (409/4092) applies", async () => {
    const hook = (account: string) =>
      admin.send("POST", `/accounts/${account}/projects/shop/webhooks`, {
        url: "http://127.0.0.1:9/hook",
        tables: ["item"],
      });
    const byPlan = await account("keys");
    const posts = await Promise.all(Array.from({ length: 5 }, () => hook(byPlan.name)));
    expect(posts.map((p) => p.status).sort()).to.deep.equal([201, 201, 403, 403, 403]);
    expectQuotaRefusals(posts, { limit: "webhooksPerProject", value: 2, used: 2, plan: "keys" });
    await expectFullInUsage(byPlan.name, "webhooksPerProject", "webhooks", 2);
    // A plan allowing more than the deployment: the deployment's limit answers, as before.
    const byDeployment = await account("hooks");
    const more = await Promise.all(Array.from({ length: 5 }, () => hook(byDeployment.name)));
    expect(more.map((p) => p.status).sort()).to.deep.equal([201, 201, 201, 409, 409]);
    for (const refused of more.filter((p) => p.status === 409))
      expect(refused.body).to.include({ errorCode: ErrorCode.limitReached, limit: DEPLOYMENT_WEBHOOKS });
  });
});
