/**
 * Request rate limits per key and per account (RATE_LIMITS): token buckets in
 * Redis shared by every data-service process and the auth service; an empty
 * bucket answers 429/4292 with Retry-After and the RateLimit headers. The
 * window is an hour, so no token comes back while a test runs.
 */
import { expect } from "chai";
import { ErrorCode } from "../../../shared/errors.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminKey, putAdmin } from "../../support/admins.ts";
import { type DataProcess, dataServiceEnv, startDataProcess } from "../../support/data-process.ts";
import { adminClient, call, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { until } from "../../support/until.ts";

const KEY_LIMIT = 4;
const ACCOUNT_LIMIT = 7;

describe("request rate limits per account and per key", function () {
  this.timeout(60_000);
  let platform: Platform;
  let second: DataProcess;
  let admin: ReturnType<typeof adminClient>;
  let seq = 0;

  before(async () => {
    platform = await startPlatform({
      RATE_LIMITS: "true",
      RATE_LIMIT_KEY: String(KEY_LIMIT),
      RATE_LIMIT_ACCOUNT: String(ACCOUNT_LIMIT),
      RATE_LIMIT_WINDOW_SECONDS: "3600",
    });
    second = await startDataProcess(dataServiceEnv(platform.dataConfig));
    admin = adminClient(platform.baseUrl, platform.adminToken);
  });

  after(async () => {
    await second?.cleanup();
    await platform?.close();
  });

  /** A new account with one project, a user, and `keys` keys of its own. */
  async function freshAccount(keys: number) {
    const account = `rl${++seq}`;
    expect((await admin.putAccount(account)).status).to.equal(201);
    expect((await admin.putProject(account, "shop", demoProject())).status).to.equal(201);
    await admin.putUser(account, "shop", "vera", { password: "vera-password", roles: ["Full access"] });
    const made: string[] = [];
    for (let i = 0; i < keys; i++) made.push(await admin.keyWith(account, "shop", ["Full access"]));
    return { account, keys: made };
  }

  /** GETs alternating between the two data-service processes. */
  const get = (account: string, key: string, n: number) =>
    projectClient(n % 2 === 0 ? platform.dataUrl : second.base, account, "shop").get(key, "Customers");

  it("shares a key's bucket between processes; past it, 429 with Retry-After, RateLimit and RateLimit-Policy", async () => {
    const { account, keys } = await freshAccount(1);
    const answers: Reply[] = [];
    for (let n = 0; n <= KEY_LIMIT; n++) answers.push(await get(account, keys[0]!, n));
    expect(answers.slice(0, KEY_LIMIT).map((r) => r.status)).to.deep.equal(Array(KEY_LIMIT).fill(200));
    expect(
      answers.slice(0, KEY_LIMIT).map((r) => /"key";r=(\d+)/.exec(r.headers.get("ratelimit") ?? "")?.[1]),
    ).to.deep.equal(["3", "2", "1", "0"]);
    const refused = answers[KEY_LIMIT]!;
    expect(refused.status).to.equal(429);
    expect(refused.body.errorCode).to.equal(ErrorCode.rateLimited);
    expect(Number(refused.headers.get("retry-after"))).to.be.greaterThan(0);
    expect(refused.headers.get("ratelimit-policy")).to.equal(
      `"account";q=${ACCOUNT_LIMIT};w=3600, "key";q=${KEY_LIMIT};w=3600`,
    );
    expect(refused.headers.get("ratelimit")).to.match(/^"account";r=\d+;t=\d+, "key";r=0;t=\d+$/);
  });

  it("limits the account's keys together, and counts its logins too", async () => {
    const { account, keys } = await freshAccount(2);
    const statuses: number[] = [];
    for (let n = 0; n < KEY_LIMIT; n++) statuses.push((await get(account, keys[0]!, n)).status);
    for (let n = 0; n < ACCOUNT_LIMIT - KEY_LIMIT - 1; n++)
      statuses.push((await get(account, keys[1]!, n)).status);
    const login = await projectClient(platform.baseUrl, account, "shop").login({
      username: "vera",
      password: "vera-password",
    });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    expect(statuses).to.deep.equal(Array(ACCOUNT_LIMIT - 1).fill(200));
    const refused = await get(account, keys[1]!, 1);
    expect(refused.status).to.equal(429);
    expect(refused.headers.get("ratelimit")).to.match(/^"account";r=0;/);
    const refusedLogin = await projectClient(platform.baseUrl, account, "shop").login({
      username: "vera",
      password: "vera-password",
    });
    expect(refusedLogin.status).to.equal(429);
    expect(refusedLogin.body.errorCode).to.equal(ErrorCode.rateLimited);
    expect(Number(refusedLogin.headers.get("retry-after"))).to.be.greaterThan(0);
    expect(refusedLogin.headers.get("ratelimit-policy")).to.equal(`"account";q=${ACCOUNT_LIMIT};w=3600`);
  });

  it("leaves other accounts alone", async () => {
    const { account, keys } = await freshAccount(1);
    for (let n = 0; n <= KEY_LIMIT; n++) await get(account, keys[0]!, n);
    const other = await freshAccount(1);
    expect((await get(other.account, other.keys[0]!, 0)).status).to.equal(200);
  });

  it("takes the account's own limits, set by the operator on the account record", async () => {
    const { account, keys } = await freshAccount(1);
    const put = await admin.send("PUT", `/accounts/${account}`, { rateLimits: { key: 2 } });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.rateLimits).to.deep.equal({ account: null, key: 2 });
    const statuses: number[] = [];
    for (let n = 0; n < 3; n++) statuses.push((await get(account, keys[0]!, n)).status);
    expect(statuses).to.deep.equal([200, 200, 429]);
    const refused = await get(account, keys[0]!, 1);
    expect(refused.headers.get("ratelimit-policy")).to.equal(
      `"account";q=${ACCOUNT_LIMIT};w=3600, "key";q=2;w=3600`,
    );
    const back = await admin.send("PUT", `/accounts/${account}`, { rateLimits: { key: null } });
    expect(back.body.rateLimits).to.deep.equal({ account: null, key: null });
    expect((await admin.send("GET", `/accounts/${account}`)).body.rateLimits).to.deep.equal({
      account: null,
      key: null,
    });
  });

  it("takes the account's plan's requests per window; the account's own limit still wins", async () => {
    const { account, keys } = await freshAccount(1);
    expect((await admin.send("PUT", "/plans/paced", { requestsPerWindow: 2 })).status).to.be.oneOf([
      200, 201,
    ]);
    expect((await admin.send("PUT", `/accounts/${account}/plan`, { plan: "paced" })).status).to.equal(200);
    const statuses: number[] = [];
    for (let n = 0; n < 3; n++) statuses.push((await get(account, keys[0]!, n)).status);
    expect(statuses).to.deep.equal([200, 200, 429]);
    const refused = await get(account, keys[0]!, 1);
    expect(refused.headers.get("ratelimit-policy")).to.match(/^"account";q=2;w=3600/);
    // Logins (the auth service) share the account's bucket, with the same limit, once the auth
    // service's copy of the account's plan is read again (PLAN_CACHE_MS; its logins cached it).
    const shop = projectClient(platform.baseUrl, account, "shop");
    let login: Reply | undefined;
    await until("the auth service applies the new plan", async () => {
      login = await shop.login({ username: "vera", password: "vera-password" });
      return login.headers.get("ratelimit-policy") === `"account";q=2;w=3600`;
    });
    expect(login?.status).to.equal(429);
    await admin.send("PUT", `/accounts/${account}`, { rateLimits: { account: 5 } });
    expect((await get(account, keys[0]!, 0)).headers.get("ratelimit-policy")).to.match(
      /^"account";q=5;w=3600/,
    );
  });

  it("refuses an account administrator who sets the account's limits (403), and changes nothing", async () => {
    const { account } = await freshAccount(0);
    await putAdmin(admin, account, "ada", "admin", "ada-password-1");
    const key = await adminKey(platform.baseUrl, account, "ada", "ada-password-1");
    const headers = { authorization: `Bearer ${key}` };
    const r = await call(platform.baseUrl, "PUT", `/admin/v1/accounts/${account}`, {
      headers,
      body: { rateLimits: { account: 1000000 } },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(403);
    expect((await admin.send("GET", `/accounts/${account}`)).body.rateLimits).to.deep.equal({
      account: null,
      key: null,
    });
  });

  it("forgets the account's own limits with the account", async () => {
    const { account } = await freshAccount(0);
    await admin.send("PUT", `/accounts/${account}`, { rateLimits: { account: 3 } });
    expect((await admin.send("DELETE", `/accounts/${account}`)).status).to.equal(200);
    expect((await admin.putAccount(account)).status).to.equal(201);
    expect((await admin.send("GET", `/accounts/${account}`)).body.rateLimits).to.deep.equal({
      account: null,
      key: null,
    });
  });
});
