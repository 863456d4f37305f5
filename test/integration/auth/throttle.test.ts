/**
 * Brute-force defence (docs/authentication.md "Lock-out") through the login route: per-username
 * lock-out and per-address ceiling, with the configured settings. Each `it` is its own client
 * (its own loopback address, so its own address budget) guessing at its own usernames, so the
 * tests neither depend on nor disturb each other's order. The lock lasts far longer than any test
 * and nothing waits for it to end: how the lock grows with time and stops at its cap is tested on
 * the throttle itself with a clock the test moves (attempt-throttle.test.ts).
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, callFrom } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const LOCKOUT_SECONDS = 600;
const login = "/rest/acme/demo/v1/@authentication";

describe("login throttle", () => {
  let platform: Platform;

  before(async () => {
    platform = await startPlatform({
      LOGIN_FAILURES_BEFORE_LOCKOUT: "3",
      LOGIN_LOCKOUT_BASE_SECONDS: String(LOCKOUT_SECONDS),
      LOGIN_LOCKOUT_MAX_SECONDS: String(4 * LOCKOUT_SECONDS),
      LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: "12",
    });
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await admin.putProject("acme", "demo", demoProject());
    for (const u of ["victim", "bystander", "resetter"]) {
      await admin.putUser("acme", "demo", u, { password: `${u}-password`, roles: ["Full access"] });
    }
  });
  after(() => platform.close());

  /** One client of the platform, at its own loopback address. */
  const client = (address: string) => ({
    login: (username: string, password = `${username}-password`) =>
      callFrom(address, platform.baseUrl, "POST", login, { body: { username, password } }),
    fail: (username: string) =>
      callFrom(address, platform.baseUrl, "POST", login, { body: { username, password: "wrong-password" } }),
  });

  it("locks a username after N failures with 429/4291 and a Retry-After of the configured lock, even for the right password", async () => {
    const c = client("127.0.0.11");
    for (let i = 0; i < 3; i++) expect((await c.fail("victim")).status).to.equal(401);
    const locked = await c.login("victim");
    expect(locked.status).to.equal(429);
    expect(locked.body.errorCode).to.equal(4291);
    // At most the lock (it runs from the third failure); half of it would take a five-minute stall.
    expect(Number(locked.headers.get("retry-after"))).to.be.within(LOCKOUT_SECONDS / 2, LOCKOUT_SECONDS);
  });

  it("locks only the username that failed", async () => {
    const c = client("127.0.0.12");
    for (let i = 0; i < 3; i++) expect((await c.fail("victim-of-12")).status).to.equal(401);
    expect((await c.fail("victim-of-12")).status).to.equal(429);
    expect((await c.login("bystander")).status).to.equal(200);
  });

  it("a success resets the count", async () => {
    const c = client("127.0.0.13");
    for (let i = 0; i < 2; i++) expect((await c.fail("resetter")).status).to.equal(401);
    expect((await c.login("resetter")).status).to.equal(200);
    for (let i = 0; i < 2; i++) expect((await c.fail("resetter")).status).to.equal(401);
    expect((await c.login("resetter")).status).to.equal(200);
  });

  it("a per-address ceiling stops many usernames from one client, and only that client", async () => {
    const c = client("127.0.0.14");
    for (let i = 0; i < 12; i++)
      expect((await c.fail(`spray-${i}`)).status, `failure ${i + 1}`).to.equal(401);
    const r = await c.fail("spray-final");
    expect(r.status).to.equal(429);
    expect(r.body.errorCode).to.equal(4291);
    expect((await client("127.0.0.15").fail("spray-final")).status).to.equal(401);
  });
});
