/**
 * @authentication (docs/authentication.md) through the edge on
 * real Redis. Test names follow the contract's rows.
 */
import { expect } from "chai";
import { hashKey } from "../../../shared/key-format.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { keyRecordKey } from "../../../shared/redis/key-layout.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { redisDump } from "../../support/redis-dump.ts";
import { testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";

describe("@authentication", () => {
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let demo: ReturnType<typeof projectClient>;
  let redis: RedisClient;

  const login = async (username = "alice", password = "alice-password") => {
    const r = await demo.login({ username, password });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { apikey: string; expiration: string; userIdentifier: string; roles: string[] };
  };

  /** A key of `brief` (a 1 s lifetime), once revalidating it (which changes nothing) answers that it expired. */
  const expiredKey = async () => {
    const { apikey } = await login("brief", "brief-password");
    await until(
      "the key has expired",
      async () => (await demo.login({ apikey })).body.errorCode === 4013,
      10_000,
    );
    return apikey;
  };

  before(async () => {
    platform = await startPlatform();
    redis = await testRedisClient();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await admin.putAccount("globex");
    for (const [account, project] of [
      ["acme", "demo"],
      ["acme", "other"],
      ["globex", "demo"],
      ["globex", "other"],
    ] as const) {
      await admin.putProject(
        account,
        project,
        demoProject({ authentication: { provider: "builtin", keyLifetimeSeconds: 600 } }),
      );
      await admin.putUser(account, project, "alice", { password: "alice-password", roles: ["Full access"] });
    }
    await admin.putUser("acme", "demo", "dave", { password: "dave-password", roles: ["Full access"] });
    await admin.putUser("acme", "demo", "brief", {
      password: "brief-password",
      roles: ["Full access"],
      keyLifetimeSeconds: 1,
    });
    demo = projectClient(platform.baseUrl, "acme", "demo");
  });
  after(async () => {
    redis.disconnect();
    await platform.close();
  });

  describe("login", () => {
    it("returns apikey, expiration (UTC, ms, no zone), userIdentifier and roles", async () => {
      const before = Date.now();
      const body = await login();
      expect(body.apikey).to.match(/^tsk_[A-Za-z0-9_-]{32}$/);
      expect(body.expiration).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
      const expires = Date.parse(`${body.expiration}Z`);
      // Project keyLifetimeSeconds (600) applies when the user has no setting.
      expect(expires).to.be.within(before + 599_000, Date.now() + 601_000);
      expect(body).to.include({ userIdentifier: "alice" });
      expect(body.roles).to.deep.equal(["Full access"]);
    });
    it("issues a NEW key on every success", async () => {
      const keys = new Set([(await login()).apikey, (await login()).apikey, (await login()).apikey]);
      expect(keys.size).to.equal(3);
    });
    it("a user's keyLifetimeSeconds wins over the project's", async () => {
      const before = Date.now();
      const body = await login("brief", "brief-password");
      expect(Date.parse(`${body.expiration}Z`)).to.be.within(before, Date.now() + 1500);
    });
    it("the default lifetime is 3600 s when the project sets none", async () => {
      await admin.putProject("acme", "plain", demoProject({ authentication: { provider: "builtin" } }));
      await admin.putUser("acme", "plain", "alice", { password: "alice-password", roles: ["Full access"] });
      const before = Date.now();
      const r = await projectClient(platform.baseUrl, "acme", "plain").login({
        username: "alice",
        password: "alice-password",
      });
      expect(Date.parse(`${r.body.expiration}Z`)).to.be.within(before + 3_599_000, Date.now() + 3_601_000);
    });
    it("failed logins: one body for an unknown user and a wrong password (401/4015)", async () => {
      const unknown = await demo.login({ username: "nobody", password: "alice-password" });
      const wrong = await demo.login({ username: "dave", password: "wrong-password" });
      expect(unknown.status).to.equal(401);
      expect(wrong.status).to.equal(401);
      const strip = (b: Record<string, unknown>) => ({ ...b, requestId: undefined });
      expect(strip(unknown.body)).to.deep.equal(strip(wrong.body));
      expect(unknown.body.errorCode).to.equal(4015);
    });
    it("missing or non-string credentials are a failed login, not a crash", async () => {
      for (const body of [
        {},
        { username: "erin" },
        { username: 1, password: 2 },
        { username: "erin", password: null },
      ]) {
        const r = await demo.login(body);
        expect(r.status, JSON.stringify(body)).to.equal(401);
        expect(r.body.errorCode).to.equal(4015);
      }
    });
    it("a login to a missing project or version is 404/4041", async () => {
      expect(
        (await projectClient(platform.baseUrl, "acme", "nope").login({ username: "a", password: "b" }))
          .status,
      ).to.equal(404);
      const v = await projectClient(platform.baseUrl, "acme", "demo", "v7").login({
        username: "alice",
        password: "alice-password",
      });
      expect(v.status).to.equal(404);
      expect(v.body.errorCode).to.equal(4041);
    });
    it("GET @authentication answers with the login fields", async () => {
      const r = await call(platform.baseUrl, "GET", `${demo.root}/@authentication`);
      expect(r.status).to.equal(200);
      expect(r.body.fields.map((f: { name: string }) => f.name)).to.deep.equal(["username", "password"]);
    });
  });

  describe("revalidation ({apikey} only): provider not called, state unchanged", () => {
    it("valid → the same key and its original expiration", async () => {
      const first = await login();
      const again = await demo.login({ apikey: first.apikey });
      expect(again.status).to.equal(200);
      expect(again.body.apikey).to.equal(first.apikey);
      expect(again.body.expiration).to.equal(first.expiration);
    });
    it("accepts the key with its ':1' part", async () => {
      const first = await login();
      expect((await demo.login({ apikey: `${first.apikey}:1` })).body.apikey).to.equal(first.apikey);
    });
    it("expired → 401/4013", async () => {
      const r = await demo.login({ apikey: await expiredKey() });
      expect(r.status).to.equal(401);
      expect(r.body.errorCode).to.equal(4013);
    });
    it("disabled → 401/4014", async () => {
      const k = (await login()).apikey;
      await demo.login({ apikey: k, disable: true });
      const r = await demo.login({ apikey: k });
      expect(r.status).to.equal(401);
      expect(r.body.errorCode).to.equal(4014);
    });
    it("unknown → 401/4011", async () => {
      const r = await demo.login({ apikey: "tsk_doesnotexist" });
      expect(r.status).to.equal(401);
      expect(r.body.errorCode).to.equal(4011);
    });
    it("a key of another project → 401/4012", async () => {
      const k = (await login()).apikey;
      const r = await projectClient(platform.baseUrl, "acme", "other").login({ apikey: k });
      expect(r.body.errorCode).to.equal(4012);
    });
  });

  describe("disable ({apikey, disable: true})", () => {
    it("active → {apikey, disabled: true}, and the key stops working on the data API", async () => {
      const k = (await login()).apikey;
      expect((await demo.get(k, "customer")).status).to.equal(200);
      const r = await demo.login({ apikey: k, disable: true });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ apikey: k, disabled: true });
      const after = await demo.get(k, "customer");
      expect(after.status).to.equal(401);
      expect(after.body.errorCode).to.equal(4014);
    });
    it("already disabled → the same success (idempotent)", async () => {
      const k = (await login()).apikey;
      await demo.login({ apikey: k, disable: true });
      const r = await demo.login({ apikey: k, disable: true });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ apikey: k, disabled: true });
    });
    it("expired → the same success", async () => {
      const k = await expiredKey();
      const r = await demo.login({ apikey: k, disable: true });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ apikey: k, disabled: true });
    });
    it("unknown → 404/4042", async () => {
      const r = await demo.login({ apikey: "tsk_neverissued", disable: true });
      expect(r.status).to.equal(404);
      expect(r.body.errorCode).to.equal(4042);
    });
  });

  describe("password change (?enablePasswordChange!)", () => {
    beforeEach(async () => {
      await admin.putUser("acme", "demo", "carol", { password: "carol-password", roles: ["Full access"] });
    });
    it("success with newPassword: new key, result success, and only the new password works", async () => {
      const r = await demo.login(
        { username: "carol", password: "carol-password", newPassword: "carol-new-pass" },
        "?enablePasswordChange!",
      );
      expect(r.status).to.equal(200);
      expect(r.body.apikey).to.be.a("string");
      expect(r.body).to.include({ changePasswordResult: "success" });
      expect(r.body.changePasswordMessage).to.be.a("string");
      expect((await demo.login({ username: "carol", password: "carol-password" })).status).to.equal(401);
      expect((await demo.login({ username: "carol", password: "carol-new-pass" })).status).to.equal(200);
    });
    it("accepts new_password too", async () => {
      const r = await demo.login(
        { username: "carol", password: "carol-password", new_password: "carol-other-1" },
        "?enablePasswordChange!",
      );
      expect(r.body.changePasswordResult).to.equal("success");
      expect((await demo.login({ username: "carol", password: "carol-other-1" })).status).to.equal(200);
    });
    it("failure (password policy): the login still succeeds with a new key, the reason is given", async () => {
      const r = await demo.login(
        { username: "carol", password: "carol-password", newPassword: "short" },
        "?enablePasswordChange!",
      );
      expect(r.status).to.equal(200);
      expect(r.body.apikey).to.be.a("string");
      expect(r.body.changePasswordResult).to.equal("failure");
      expect(r.body.changePasswordMessage).to.contain("at least");
      expect((await demo.login({ username: "carol", password: "carol-password" })).status).to.equal(200);
    });
    it("a wrong current password is a failed login and changes nothing", async () => {
      const r = await demo.login(
        { username: "carol", password: "nope-nope", newPassword: "carol-new-pass" },
        "?enablePasswordChange!",
      );
      expect(r.status).to.equal(401);
      expect(r.body.errorCode).to.equal(4015);
      expect((await demo.login({ username: "carol", password: "carol-password" })).status).to.equal(200);
    });
    it("the parameter is exact and case-sensitive", async () => {
      const r = await demo.login(
        { username: "carol", password: "carol-password", newPassword: "carol-new-pass" },
        "?enablepasswordchange!",
      );
      expect(r.status).to.equal(200);
      expect(r.body).to.not.have.property("changePasswordResult");
      expect((await demo.login({ username: "carol", password: "carol-password" })).status).to.equal(200);
    });
  });

  describe("key transport", () => {
    let k: string;
    before(async () => {
      k = (await login()).apikey;
    });
    for (const scheme of ["Tessera", "CALiveAPICreator", "Espresso"]) {
      it(`accepts 'Authorization: ${scheme} <key>:1'`, async () => {
        const r = await call(platform.baseUrl, "GET", `${demo.root}/customer`, {
          headers: keyHeader(k, scheme),
        });
        expect(r.status).to.equal(200);
      });
    }
    it("ignores the part after the colon, and accepts the key without it", async () => {
      for (const value of [`${k}:2`, k]) {
        const r = await call(platform.baseUrl, "GET", `${demo.root}/customer`, {
          headers: { authorization: `Tessera ${value}` },
        });
        expect(r.status).to.equal(200);
      }
    });
    it("an unknown scheme or an unreadable header → 401/4011", async () => {
      for (const authorization of [`Bearer ${k}:1`, "Tessera", "Tessera :1", `Tessera ${k} extra:1`]) {
        const r = await call(platform.baseUrl, "GET", `${demo.root}/customer`, {
          headers: { authorization },
        });
        expect(r.status, authorization).to.equal(401);
        expect(r.body.errorCode).to.equal(4011);
      }
    });
    it("?auth=<key>:1 works on GET only", async () => {
      expect((await call(platform.baseUrl, "GET", `${demo.root}/customer?auth=${k}:1`)).status).to.equal(200);
      const post = await call(platform.baseUrl, "POST", `${demo.root}/customer?auth=${k}:1`, {
        body: { name: "Z" },
      });
      expect(post.status).to.equal(401);
      expect(post.body.errorCode).to.equal(4011);
    });
  });

  describe("key records in Redis", () => {
    it("stores only a hash of the key, with a TTL of lifetime + retention", async () => {
      const k = (await login()).apikey;
      const { names, values } = await redisDump(redis, `tessera-test:${platform.prefix}`);
      expect(names.join(" ")).to.not.contain(k);
      expect(values.join(" ")).to.not.contain(k);
      const recordKey = keyRecordKey(`tessera-test:${platform.prefix}`, hashKey(k));
      const ttl = await redis.pttl(recordKey);
      // 600 s lifetime + 7 days retention.
      expect(ttl).to.be.within(600_000 + 7 * 86_400_000 - 10_000, 600_000 + 7 * 86_400_000);
    });
  });

  describe("scope: a key works only in its own account and project", () => {
    it("for every verb, through table and custom resources (two accounts × two projects)", async () => {
      const k = (await login()).apikey;
      const targets = [
        ["acme", "other"],
        ["globex", "demo"],
        ["globex", "other"],
      ];
      for (const [account, project] of targets) {
        const client = projectClient(platform.baseUrl, account!, project!);
        const replies = [
          await client.get(k, "customer"),
          await client.get(k, "Customers"),
          await client.get(k, "customer/x"),
          await client.post(k, "customer", { name: "intruder" }),
          await client.put(k, "customer/x", { "@metadata": { checksum: "override" }, credit_limit: 1 }),
          await client.delete(k, "customer/x?checksum=override"),
          await client.get(k, "@tables"),
        ];
        for (const r of replies) {
          expect(r.status, `${account}/${project}`).to.equal(401);
          expect(r.body.errorCode).to.equal(4012);
        }
      }
      expect((await demo.get(k, "customer")).status).to.equal(200);
    });
    it("a re-created project does not honour keys of its predecessor", async () => {
      await admin.putProject("acme", "phoenix", demoProject());
      await admin.putUser("acme", "phoenix", "alice", { password: "alice-password", roles: ["Full access"] });
      const phoenix = projectClient(platform.baseUrl, "acme", "phoenix");
      const k = (await phoenix.login({ username: "alice", password: "alice-password" })).body.apikey;
      await admin.send("DELETE", "/accounts/acme/projects/phoenix");
      await admin.putProject("acme", "phoenix", demoProject());
      const r = await phoenix.get(k, "customer");
      expect(r.status).to.equal(401);
      expect(r.body.errorCode).to.equal(4011);
    });
  });
});
