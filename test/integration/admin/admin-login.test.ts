/**
 * An account administrator's @authentication (served by the auth service, the
 * verdict from the data service): the contract of a project's — a new key every
 * login, revalidation, disable, password change — with the lock-out per account
 * and login, reserved before verification also under concurrency, and one
 * generic failure body whether the password is wrong, the admin unknown, or the
 * account absent. Admin keys open the admin API (Bearer or a key scheme), never
 * the data API.
 */
import { expect } from "chai";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminAuthentication, adminKey, putAdmin, withoutRequestId } from "../../support/admins.ts";
import { adminClient, call, keyHeader, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { redisDump } from "../../support/redis-dump.ts";
import { testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";

describe("account administrators' @authentication", () => {
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  let redis: RedisClient;
  const account = "acme";
  const login = (body: unknown, query = "", to = account) =>
    adminAuthentication(platform.baseUrl, to, body, query);

  before(async () => {
    platform = await startPlatform({ ADMIN_KEY_LIFETIME_SECONDS: "2", LOGIN_FAILURES_BEFORE_LOCKOUT: "5" });
    operator = adminClient(platform.baseUrl, platform.adminToken);
    redis = await testRedisClient();
    await operator.putAccount(account);
    await operator.putAccount("globex");
    await putAdmin(operator, account, "ann", "admin", "ann-password-1");
    await putAdmin(operator, account, "rita", "reader", "rita-password-1");
    await putAdmin(operator, "globex", "gus", "admin", "gus-password-1");
  });
  after(async () => {
    redis.disconnect();
    await platform.close();
  });

  it("a login answers a new key every time, with its expiration, the login and the role", async () => {
    const first = await login({ username: "ann", password: "ann-password-1" });
    const second = await login({ username: "ann", password: "ann-password-1" });
    for (const r of [first, second]) {
      expect(r.status).to.equal(200);
      expect(r.body).to.have.keys(["apikey", "expiration", "userIdentifier", "roles"]);
      expect(r.body.apikey).to.match(/^tsk_/);
      expect(r.body.expiration).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
      expect(r.body).to.deep.include({ userIdentifier: "ann", roles: ["admin"] });
    }
    expect(first.body.apikey).to.not.equal(second.body.apikey);
    const reader = await login({ username: "rita", password: "rita-password-1" });
    expect(reader.body.roles).to.deep.equal(["reader"]);
  });

  it("fails with one body for a wrong password, an unknown admin and an account that does not exist", async () => {
    const answers = await Promise.all([
      login({ username: "ann", password: "wrong-password" }),
      login({ username: "nobody", password: "ann-password-1" }),
      login({ username: "ann", password: "ann-password-1" }, "", "nowhere"),
      login({ username: "gus", password: "gus-password-1" }), // globex's admin at acme
      login({}),
    ]);
    for (const r of answers) {
      expect(r.status).to.equal(401);
      expect(withoutRequestId(r.body)).to.deep.equal(withoutRequestId(answers[0]!.body));
    }
    expect(answers[0]!.body.errorCode).to.equal(4015);
  });

  it("revalidates a key (original expiry) and disables it; the disabled key opens nothing any more", async () => {
    const key = await adminKey(platform.baseUrl, account, "ann", "ann-password-1");
    const first = await login({ username: "ann", password: "ann-password-1" });
    const again = await login({ apikey: first.body.apikey });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);

    const disabled = await login({ apikey: key, disable: true });
    expect(disabled.body).to.deep.equal({ apikey: key, disabled: true });
    expect((await login({ apikey: key, disable: true })).status, "idempotent").to.equal(200);
    const revalidated = await login({ apikey: key });
    expect(revalidated.status).to.equal(401);
    expect(revalidated.body.errorCode).to.equal(4014);
    const used = await adminClient(platform.baseUrl, key).send("GET", `/accounts/${account}`);
    expect(used.status).to.equal(401);
    expect(used.body.errorCode).to.equal(4014);
    expect((await login({ apikey: "tsk_unknown" })).body.errorCode).to.equal(4011);
    expect((await login({ apikey: "tsk_unknown", disable: true })).body.errorCode).to.equal(4042);
  });

  it("an expired key: revalidation and use answer 401/4013", async () => {
    const key = await adminKey(platform.baseUrl, account, "ann", "ann-password-1");
    await until("the key expired", async () => (await login({ apikey: key })).body.errorCode === 4013);
    const used = await adminClient(platform.baseUrl, key).send("GET", `/accounts/${account}`);
    expect(used.status).to.equal(401);
    expect(used.body.errorCode).to.equal(4013);
  });

  it("keys of other accounts and of projects are 401/4012 here; on the data API an admin key opens only its account's projects", async () => {
    await operator.putProject(account, "demo", demoProject());
    const projectKey = (await operator.createKey(account, "demo", { name: "k", roles: ["Full access"] })).body
      .apikey;
    const gusKey = await adminKey(platform.baseUrl, "globex", "gus", "gus-password-1");
    for (const key of [projectKey, gusKey]) {
      expect((await login({ apikey: key })).body.errorCode).to.equal(4012);
      expect((await login({ apikey: key, disable: true })).body.errorCode).to.equal(4012);
    }
    const annKey = await adminKey(platform.baseUrl, account, "ann", "ann-password-1");
    const demo = projectClient(platform.baseUrl, account, "demo");
    expect((await demo.get(annKey, "customer")).status).to.equal(200);
    const data = await demo.get(gusKey, "customer");
    expect(data.status).to.equal(401);
    expect(data.body.errorCode).to.equal(4012);
    const projectLogin = await demo.login({ apikey: annKey });
    expect(projectLogin.body.errorCode).to.equal(4012);
    const onAdmin = await adminClient(platform.baseUrl, projectKey).send("GET", `/accounts/${account}`);
    expect(onAdmin.status).to.equal(401);
    expect(onAdmin.body.errorCode).to.equal(4012);
  });

  it("accepts an admin key as 'Bearer <key>' and as '<scheme> <key>:1', never as ?auth=", async () => {
    const key = await adminKey(platform.baseUrl, account, "ann", "ann-password-1");
    const path = `/admin/v1/accounts/${account}`;
    for (const headers of [{ authorization: `Bearer ${key}` }, keyHeader(key), keyHeader(key, "Espresso")]) {
      expect((await call(platform.baseUrl, "GET", path, { headers })).status).to.equal(200);
    }
    const param = await call(platform.baseUrl, "GET", `${path}?auth=${key}:1`);
    expect(param.status).to.equal(401);
    expect(param.body.errorCode).to.equal(4011);
  });

  it("changes the password on login: the new key works, older keys and the old password do not", async () => {
    await putAdmin(operator, account, "carl", "admin", "carl-password-1");
    const older = await adminKey(platform.baseUrl, account, "carl", "carl-password-1");
    const weak = await login(
      { username: "carl", password: "carl-password-1", newPassword: "short" },
      "?enablePasswordChange!",
    );
    expect(weak.status).to.equal(200);
    expect(weak.body.changePasswordResult).to.equal("failure");
    const changed = await login(
      { username: "carl", password: "carl-password-1", new_password: "carl-password-2" },
      "?enablePasswordChange!",
    );
    expect(changed.status).to.equal(200);
    expect(changed.body).to.include({ changePasswordResult: "success" });
    expect(
      (await adminClient(platform.baseUrl, changed.body.apikey).send("GET", `/accounts/${account}`)).status,
    ).to.equal(200);
    for (const stale of [older, weak.body.apikey]) {
      const r = await adminClient(platform.baseUrl, stale).send("GET", `/accounts/${account}`);
      expect(r.status).to.equal(401);
      expect(r.body.errorCode).to.equal(4011);
      expect((await login({ apikey: stale })).body.errorCode).to.equal(4011);
    }
    expect((await login({ username: "carl", password: "carl-password-1" })).status).to.equal(401);
    expect((await login({ username: "carl", password: "carl-password-2" })).status).to.equal(200);
  });

  it("locks a login out after repeated failures, also with the right password; other logins are not affected", async () => {
    await putAdmin(operator, account, "dora", "admin", "dora-password-1");
    for (let i = 0; i < 5; i++) {
      expect((await login({ username: "dora", password: `guess-${i}-xx` })).status).to.equal(401);
    }
    const locked = await login({ username: "dora", password: "dora-password-1" });
    expect(locked.status).to.equal(429);
    expect(locked.body.errorCode).to.equal(4291);
    expect(Number(locked.headers.get("retry-after"))).to.be.greaterThan(0);
    expect(
      (await login({ username: "DORA ", password: "dora-password-1" })).status,
      "same identity",
    ).to.equal(429);
    expect((await login({ username: "ann", password: "ann-password-1" })).status).to.equal(200);
    // The same login in another account is another identity.
    await putAdmin(operator, "globex", "dora", "admin", "dora-password-1");
    expect((await login({ username: "dora", password: "dora-password-1" }, "", "globex")).status).to.equal(
      200,
    );
  });

  it("reserves attempts before verifying them: of 20 parallel guesses at most 5 are checked", async () => {
    await putAdmin(operator, account, "emil", "admin", "emil-password-1");
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => login({ username: "emil", password: `parallel-guess-${i}` })),
    );
    const checked = answers.filter((r) => r.status === 401).length;
    const refused = answers.filter((r) => r.status === 429).length;
    expect(checked).to.be.at.most(5);
    expect(checked + refused).to.equal(20);
  });

  it("stores only a hash of an admin key in Redis", async () => {
    const key = await adminKey(platform.baseUrl, account, "ann", "ann-password-1");
    const { names, values } = await redisDump(redis, `tessera-test:${platform.prefix}`);
    expect(names.join(" ") + values.join(" ")).to.not.contain(key.slice(4));
  });

  it("GET answers the login form's fields", async () => {
    const r = await call(platform.baseUrl, "GET", `/admin/v1/accounts/${account}/@authentication`);
    expect(r.status).to.equal(200);
    expect(r.body.fields.map((f: { name: string }) => f.name)).to.deep.equal(["username", "password"]);
  });
});
