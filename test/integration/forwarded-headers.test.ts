/**
 * Forwarded headers are believed only from trusted proxies. Clients are told
 * apart by their own loopback addresses (127.0.0.2, 127.0.0.3, …); the edge
 * (on 127.0.0.1, trusted by the services) overwrites whatever X-Forwarded-*
 * headers they send with what it saw.
 */
import { expect } from "chai";
import { demoProject } from "../fixtures/demo-project.ts";
import { adminClient, callFrom, keyHeader } from "../support/http.ts";
import { type Platform, startPlatform } from "../support/platform.ts";

const login = "/rest/acme/demo/v1/@authentication";

describe("forwarded headers", () => {
  let platform: Platform;
  let key: string;

  before(async () => {
    platform = await startPlatform({
      LOGIN_FAILURES_BEFORE_LOCKOUT: "100",
      LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: "5",
    });
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await admin.putProject("acme", "demo", demoProject());
    await admin.putUser("acme", "demo", "alice", { password: "alice-password", roles: ["Full access"] });
    key = (await admin.createKey("acme", "demo", { name: "k", roles: ["Full access"] })).body.apikey;
    const row = await callFrom("127.0.0.1", platform.baseUrl, "POST", "/rest/acme/demo/v1/customer", {
      body: { name: "Jones" },
      headers: keyHeader(key),
    });
    expect(row.status, JSON.stringify(row.body)).to.equal(201);
  });
  after(() => platform?.close());

  /** A failed login from `from` that claims to be forwarded for `forwardedFor`. */
  const fail = (from: string, forwardedFor: string, n: number, baseUrl = platform.baseUrl) =>
    callFrom(from, baseUrl, "POST", login, {
      body: { username: `spray-${from}-${n}`, password: "wrong" },
      headers: { "x-forwarded-for": forwardedFor },
    });

  describe("the per-address login ceiling", () => {
    it("is not bypassed by rotating X-Forwarded-For", async () => {
      for (let i = 0; i < 5; i++)
        expect((await fail("127.0.0.3", `198.51.100.${i}`, i)).status).to.equal(401);
      const sixth = await fail("127.0.0.3", "198.51.100.77", 5);
      expect(sixth.status).to.equal(429);
      expect(sixth.body.errorCode).to.equal(4291);
    });

    it("cannot be spent in another client's name", async () => {
      for (let i = 0; i < 6; i++) await fail("127.0.0.4", "127.0.0.2", i);
      const victim = await callFrom("127.0.0.2", platform.baseUrl, "POST", login, {
        body: { username: "alice", password: "alice-password" },
      });
      expect(victim.status, JSON.stringify(victim.body)).to.equal(200);
    });

    it("an untrusted client talking to the auth service directly cannot choose its address either", async () => {
      for (let i = 0; i < 5; i++) {
        expect((await fail("127.0.0.5", `203.0.113.${i}`, i, platform.authUrl)).status).to.equal(401);
      }
      expect((await fail("127.0.0.5", "203.0.113.99", 9, platform.authUrl)).status).to.equal(429);
    });
  });

  describe("@metadata.href", () => {
    const hrefOf = async (baseUrl: string, from: string, headers: Record<string, string>) => {
      const r = await callFrom(from, baseUrl, "GET", "/rest/acme/demo/v1/customer/Jones", {
        headers: { ...keyHeader(key), ...headers },
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      return String(r.body[0]["@metadata"].href);
    };

    it("a forged X-Forwarded-Host / -Proto through the edge does not change links", async () => {
      const href = await hrefOf(platform.baseUrl, "127.0.0.2", {
        "x-forwarded-host": "evil.example",
        "x-forwarded-proto": "https",
      });
      expect(href).to.equal(`${platform.baseUrl}/rest/acme/demo/v1/customer/Jones`);
    });

    it("an untrusted client talking to the data service directly gets links to its own Host", async () => {
      const href = await hrefOf(platform.dataUrl, "127.0.0.2", {
        "x-forwarded-host": "evil.example",
        "x-forwarded-proto": "https",
      });
      expect(href).to.equal(`${platform.dataUrl}/rest/acme/demo/v1/customer/Jones`);
    });

    it("a trusted proxy's X-Forwarded-Host / -Proto are honoured", async () => {
      const href = await hrefOf(platform.dataUrl, "127.0.0.1", {
        "x-forwarded-host": "api.example.com",
        "x-forwarded-proto": "https",
      });
      expect(href).to.equal("https://api.example.com/rest/acme/demo/v1/customer/Jones");
    });
  });
});
