/**
 * The README's walk-through, run as it is written: its shell block is taken
 * from README.md and run with bash against a real platform (the edge, both
 * services, the real stores), with PORT and DATA_DIR pointing at it as they
 * would at `make run`. Every curl call is recorded (a shell function wraps it):
 * each must succeed, and only the first two may carry the operator's token.
 */
import { expect } from "chai";
import { adminClient, projectClient } from "../support/http.ts";
import { type Platform, startPlatform } from "../support/platform.ts";
import { type Call, runWalkThrough } from "../support/walkthrough.ts";

describe("README walk-through", function () {
  this.timeout(120_000);
  let platform: Platform;
  let calls: Call[];
  let output: string;

  before(async () => {
    platform = await startPlatform();
    ({ calls, output } = await runWalkThrough(platform.baseUrl, platform.adminToken));
  });
  after(async () => {
    await platform.close();
  });

  it("runs every call successfully", () => {
    expect(calls.length).to.be.greaterThan(15);
    for (const c of calls) expect(c.status, `${c.args}\n${output}`).to.be.within(200, 299);
    expect(output).to.not.contain('"errorCode"');
  });

  it("uses the operator's token for the first two calls only", () => {
    const withToken = calls.map((c) => c.args.includes(platform.adminToken));
    expect(withToken.slice(0, 2)).to.deep.equal([true, true]);
    expect(withToken.slice(2).filter(Boolean)).to.deep.equal([]);
  });

  it("leaves the account the way it describes: an admin, a project with its history, rows, an audit trail", async () => {
    const operator = adminClient(platform.baseUrl, platform.adminToken);
    const admins = (await operator.send("GET", "/accounts/acme/admins")).body;
    expect(admins.map((a: { login: string; role: string }) => `${a.login}:${a.role}`)).to.deep.equal([
      "ann:admin",
    ]);
    const revisions = (await operator.send("GET", "/accounts/acme/projects/demo/revisions")).body;
    expect(revisions).to.have.length(1);
    expect(revisions[0].by).to.deep.equal({ kind: "admin", login: "ann", role: "admin" });
    const audit = (await operator.send("GET", "/accounts/acme/audit?pagesize=100")).body;
    expect(
      audit.map((e: { actor: { kind: string; login?: string } }) => e.actor.login ?? e.actor.kind),
    ).to.deep.equal(["operator", "operator", "ann", "ann", "ann"]);
    const key = (await operator.createKey("acme", "demo", { name: "check", roles: ["Full access"] })).body
      .apikey;
    const demo = projectClient(platform.baseUrl, "acme", "demo");
    const jones = (await demo.get(key, "customer/Jones")).body[0];
    expect(jones.credit_limit).to.equal(2000);
    const orders = (await demo.get(key, "purchaseorder")).body;
    expect(orders.map((o: { order_number: number }) => o.order_number)).to.deep.equal([2]);
  });
});
