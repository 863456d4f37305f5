/** Brute-force defence (docs/authentication.md "Lock-out"): per-username lock-out with exponential growth, per-address ceiling. */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("login throttle", () => {
  let platform: Platform;
  let demo: ReturnType<typeof projectClient>;

  before(async () => {
    platform = await startPlatform({
      LOGIN_FAILURES_BEFORE_LOCKOUT: "3",
      LOGIN_LOCKOUT_BASE_SECONDS: "1",
      LOGIN_LOCKOUT_MAX_SECONDS: "4",
      LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: "12",
    });
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await admin.putProject("acme", "demo", demoProject());
    for (const u of ["victim", "bystander", "resetter"]) {
      await admin.putUser("acme", "demo", u, { password: `${u}-password`, roles: ["Full access"] });
    }
    demo = projectClient(platform.baseUrl, "acme", "demo");
  });
  after(() => platform.close());

  const fail = (username: string) => demo.login({ username, password: "wrong-password" });

  it("locks a username after N failures with 429/4291 and Retry-After, even for the right password", async () => {
    for (let i = 0; i < 3; i++) expect((await fail("victim")).status).to.equal(401);
    const locked = await demo.login({ username: "victim", password: "victim-password" });
    expect(locked.status).to.equal(429);
    expect(locked.body.errorCode).to.equal(4291);
    expect(Number(locked.headers.get("retry-after"))).to.be.within(1, 1);
  });

  it("leaves other usernames alone", async () => {
    expect((await demo.login({ username: "bystander", password: "bystander-password" })).status).to.equal(
      200,
    );
  });

  it("grows the lock-out exponentially up to the cap", async () => {
    await sleep(1100);
    expect((await fail("victim")).status).to.equal(401); // 4th failure: 2 s
    expect(Number((await fail("victim")).headers.get("retry-after"))).to.equal(2);
    await sleep(2100);
    expect((await fail("victim")).status).to.equal(401); // 5th failure: 4 s (the cap)
    expect(Number((await fail("victim")).headers.get("retry-after"))).to.equal(4);
  });

  it("a success resets the count", async () => {
    for (let i = 0; i < 2; i++) await fail("resetter");
    expect((await demo.login({ username: "resetter", password: "resetter-password" })).status).to.equal(200);
    for (let i = 0; i < 2; i++) expect((await fail("resetter")).status).to.equal(401);
    expect((await demo.login({ username: "resetter", password: "resetter-password" })).status).to.equal(200);
  });

  it("a per-address ceiling stops many usernames from one client", async () => {
    let last = 0;
    for (let i = 0; i < 12; i++) last = (await fail(`spray-${i}`)).status;
    expect(last).to.be.oneOf([401, 429]);
    const r = await fail("spray-final");
    expect(r.status).to.equal(429);
    expect(r.body.errorCode).to.equal(4291);
  });
});
