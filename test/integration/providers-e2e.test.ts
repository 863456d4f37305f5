/**
 * The two sample custom providers end to end through the edge (docs/providers.md):
 * the library code from examples/providers is loaded into a project as a
 * customer would; the identity-service sample talks to a real HTTP identity
 * service on loopback; its userData drives a row filter.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect } from "chai";
import { demoProject } from "../fixtures/demo-project.ts";
import { adminClient, call, projectClient } from "../support/http.ts";
import { type Platform, startPlatform } from "../support/platform.ts";

const examples = path.resolve(import.meta.dirname, "../../examples/providers");
const secretWordCode = readFileSync(path.join(examples, "secret-word/secret-word.js"), "utf8");
const identityCode = readFileSync(path.join(examples, "identity-service/identity-service.js"), "utf8");

/** A small identity service: two users, groups, user data, password change. */
function identityService() {
  const users: Record<string, { password: string; groups: string[]; userData: Record<string, unknown> }> = {
    wendy: { password: "wendy-pw", groups: ["readers"], userData: { region: "west" } },
    boss: { password: "boss-pw", groups: ["admins"], userData: { region: "east" } },
  };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const input = JSON.parse(body || "{}");
      const user = users[input.username];
      const ok = user && user.password === input.password;
      res.setHeader("content-type", "application/json");
      if (req.url === "/authenticate") {
        res.statusCode = ok ? 200 : 401;
        res.end(
          JSON.stringify(
            ok
              ? {
                  ok: true,
                  groups: user.groups,
                  userData: user.userData,
                  displayName: input.username.toUpperCase(),
                }
              : { ok: false },
          ),
        );
      } else if (req.url === "/password" && ok) {
        user.password = input.newPassword;
        res.end(JSON.stringify({ ok: true }));
      } else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
  });
  return server;
}

describe("sample custom providers through the edge", () => {
  let platform: Platform;
  let identity: http.Server;
  let admin: ReturnType<typeof adminClient>;

  before(async () => {
    identity = identityService();
    await new Promise<void>((r) => identity.listen(0, "127.0.0.1", r));
    const identityUrl = `http://127.0.0.1:${(identity.address() as AddressInfo).port}`;
    platform = await startPlatform({ SANDBOX_ALLOW_LOOPBACK_FETCH: "true" });
    admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    const secret = await admin.putProject(
      "acme",
      "secret",
      demoProject({
        authentication: {
          provider: "custom",
          library: "secretWord",
          createFunction: "secretWordCreate",
          config: { secretWord: "Tessera", prompt: "What is the secret word?", roles: ["Full access"] },
        },
        libraries: { secretWord: { code: secretWordCode } },
      }),
    );
    expect(secret.status, JSON.stringify(secret.body)).to.equal(201);
    const outspoken = await admin.putProject(
      "acme",
      "outspoken",
      demoProject({
        authentication: {
          provider: "custom",
          library: "secretWord",
          createFunction: "secretWordCreate",
          config: { secretWord: "Tessera", roles: ["Full access"] },
          exposeProviderMessages: true,
        },
        libraries: { secretWord: { code: secretWordCode } },
      }),
    );
    expect(outspoken.status, JSON.stringify(outspoken.body)).to.equal(201);
    const ids = await admin.putProject(
      "acme",
      "ids",
      demoProject({
        authentication: {
          provider: "custom",
          library: "identity",
          createFunction: "identityServiceCreate",
          config: { baseUrl: identityUrl, groupRoles: { readers: "Region reader", admins: "Full access" } },
          allowedHosts: ["127.0.0.1"],
        },
        libraries: { identity: { code: identityCode } },
      }),
    );
    expect(ids.status, JSON.stringify(ids.body)).to.equal(201);
  });
  after(async () => {
    await platform.close();
    await new Promise((r) => identity.close(r));
  });

  describe("secret word", () => {
    const client = () => projectClient(platform.baseUrl, "acme", "secret");
    it("draws its login form from the provider's getLoginInfo", async () => {
      const r = await call(platform.baseUrl, "GET", `${client().root}/@authentication`);
      expect(r.body.fields.map((f: { display: string }) => f.display)).to.include("What is the secret word?");
    });
    it("logs in with the secret word; the key works on the data API", async () => {
      const r = await client().login({ username: "zoe", password: "Tessera" });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({ userIdentifier: "zoe" });
      expect(r.body.roles).to.deep.equal(["Full access"]);
      expect(r.body.userInfo).to.deep.equal({ greeting: "Hello, zoe" });
      expect((await client().post(r.body.apikey, "customer", { name: "From zoe" })).status).to.equal(201);
      const metrics = await call(platform.dataUrl, "GET", "/metrics");
      expect(metrics.body).to.match(/tessera_sandbox_calls_total\{[^}]*outcome="ok"[^}]*\} [1-9]/);
    });
    it("a wrong word is 401/4015 without the provider's own message", async () => {
      const r = await client().login({ username: "zoe", password: "nope" });
      expect(r.status).to.equal(401);
      expect(r.body.errorCode).to.equal(4015);
      expect(r.body.errorMessage).to.not.contain("secret word");
      expect(r.body.errorMessage).to.equal("Login failed: unknown user or wrong password");
    });
    it("with exposeProviderMessages, a wrong word is 401/4015 in the provider's own words", async () => {
      const r = await projectClient(platform.baseUrl, "acme", "outspoken").login({
        username: "zoe",
        password: "nope",
      });
      expect([r.status, r.body.errorCode, r.body.errorMessage]).to.deep.equal([
        401,
        4015,
        "Login failed: Sorry, that is not the secret word",
      ]);
    });
    it("a password change the provider does not support is notSupported, and the login succeeds", async () => {
      const r = await client().login(
        { username: "zoe", password: "Tessera", newPassword: "x" },
        "?enablePasswordChange!",
      );
      expect(r.status).to.equal(200);
      expect(r.body.changePasswordResult).to.equal("notSupported");
    });
  });

  describe("external identity service", () => {
    const client = () => projectClient(platform.baseUrl, "acme", "ids");
    it("maps groups to roles and userData to globals that drive a row filter", async () => {
      const boss = await client().login({ username: "boss", password: "boss-pw" });
      expect(boss.status, JSON.stringify(boss.body)).to.equal(200);
      expect(boss.body.roles).to.deep.equal(["Full access"]);
      expect(boss.body.userInfo).to.deep.equal({ displayName: "BOSS" });
      await client().post(boss.body.apikey, "customer", [
        { name: "W", region: "west" },
        { name: "E", region: "east" },
      ]);
      const wendy = await client().login({ username: "wendy", password: "wendy-pw" });
      expect(wendy.body.roles).to.deep.equal(["Region reader"]);
      const rows = await client().get(wendy.body.apikey, "customer");
      expect(rows.body.map((c: { name: string }) => c.name)).to.deep.equal(["W"]);
      expect((await client().post(wendy.body.apikey, "customer", { name: "X" })).status).to.equal(403);
    });
    it("refuses wrong credentials with 401/4015", async () => {
      const r = await client().login({ username: "wendy", password: "bad" });
      expect(r.status).to.equal(401);
      expect(r.body.errorCode).to.equal(4015);
    });
    it("changes the password through the identity service", async () => {
      const r = await client().login(
        { username: "wendy", password: "wendy-pw", newPassword: "wendy-pw-2" },
        "?enablePasswordChange!",
      );
      expect(r.status).to.equal(200);
      expect(r.body.changePasswordResult).to.equal("success");
      expect((await client().login({ username: "wendy", password: "wendy-pw-2" })).status).to.equal(200);
    });
  });
});
