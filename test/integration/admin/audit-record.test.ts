/**
 * The audit trail as a record: each entry's request id is the one the service
 * stamped (the client's X-Request-Id is kept apart), a key's value never reaches
 * an entry, a log line or a metric label, and an admin write with a query
 * parameter it does not take is refused before anything changes.
 */
import { Writable } from "node:stream";
import { expect } from "chai";
import type { AuditEntryView } from "../../../services/data/src/http/admin/audit-routes.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("audit trail: a record", () => {
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  const lines: string[] = [];

  before(async () => {
    const logSink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    });
    platform = await startPlatform({}, { logSink });
    operator = adminClient(platform.baseUrl, platform.adminToken);
    await operator.putAccount("acme");
    expect((await operator.putProject("acme", "demo", demoProject())).status).to.equal(201);
  });
  after(() => platform.close());

  const asOperator = (extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${platform.adminToken}`,
    ...extra,
  });

  /** The account's entries after `since` (all of them when it is empty). */
  async function entriesAfter(since: string): Promise<AuditEntryView[]> {
    const query = since === "" ? "" : `since=${since}&`;
    const r = await operator.send("GET", `/accounts/acme/audit?${query}pagesize=1000`);
    expect(r.status).to.equal(200);
    return r.body.filter((e: object) => !("@metadata" in e));
  }

  async function lastId(): Promise<string> {
    const all = await entriesAfter("");
    return all[all.length - 1]!.id;
  }

  it("stamps the service's own request id on each entry and keeps the client's X-Request-Id apart", async () => {
    const since = await lastId();
    const sent = { "x-request-id": "chosen-by-the-client" };
    const first = await call(platform.baseUrl, "PUT", "/admin/v1/accounts/acme", {
      body: { displayName: "one" },
      headers: asOperator(sent),
    });
    const second = await call(platform.baseUrl, "PUT", "/admin/v1/accounts/acme", {
      body: { displayName: "two" },
      headers: asOperator(sent),
    });
    const key = await call(platform.baseUrl, "POST", "/admin/v1/accounts/acme/projects/demo/apikeys", {
      body: { name: "traced", roles: ["Full access"] },
      headers: asOperator(sent),
    });
    expect([first.status, second.status, key.status]).to.deep.equal([200, 200, 201]);
    const entries = await entriesAfter(since);
    expect(entries.map((e) => e.requestId)).to.deep.equal(
      [first, second, key].map((r) => r.headers.get("x-request-id")),
    );
    expect(new Set(entries.map((e) => e.requestId)).size).to.equal(3);
    for (const e of entries) {
      expect(e.requestId).to.not.equal("chosen-by-the-client");
      expect(e.clientRequestId).to.equal("chosen-by-the-client");
    }
  });

  it("never lets a key's value reach an entry, a log line or a metric label", async () => {
    const since = await lastId();
    const generated = await operator.createKey("acme", "demo", { name: "live", roles: ["Full access"] });
    const manual = await operator.createKey("acme", "demo", {
      name: "chosen",
      roles: ["Full access"],
      apikey: "manual-key-value-7f3a",
    });
    expect([generated.status, manual.status]).to.deep.equal([201, 201]);
    const values = [generated.body.apikey as string, "manual-key-value-7f3a"];
    for (const value of values) {
      const r = await operator.deleteKey("acme", "demo", value);
      expect(r.status, "a key's value is not its id").to.equal(404);
    }
    // A generated key is recognised by its shape wherever it stands (a manual one may be any name).
    const viaData = await operator.send("DELETE", `/accounts/acme/projects/demo/users/${values[0]}`);
    expect(viaData.status).to.equal(404);
    // Both keys still work: deleting by value deleted nothing.
    const demo = projectClient(platform.baseUrl, "acme", "demo");
    for (const value of values) expect((await demo.get(value, "customer")).status).to.equal(200);

    const entries = await entriesAfter(since);
    expect(entries.map((e) => `${e.method} ${e.status}`)).to.deep.equal([
      "POST 201",
      "POST 201",
      "DELETE 404",
      "DELETE 404",
      "DELETE 404",
    ]);
    const [data, auth] = await Promise.all([
      call(platform.dataUrl, "GET", "/metrics"),
      call(platform.authUrl, "GET", "/metrics"),
    ]);
    const places = {
      entries: JSON.stringify(entries),
      logs: lines.join("\n"),
      metrics: `${data.body}\n${auth.body}`,
    };
    for (const [place, text] of Object.entries(places)) {
      expect(
        values.filter((v) => text.includes(v)),
        `key values in the ${place}`,
      ).to.deep.equal([]);
    }
  });

  it("refuses `dryrun` (not `dryRun`) with 400 and changes nothing", async () => {
    const before = await operator.send("GET", "/accounts/acme/projects/demo");
    const changed = demoProject();
    (changed.tables.customer.columns as Record<string, unknown>).vip = { type: "boolean" };
    const r = await operator.send("PUT", "/accounts/acme/projects/demo?dryrun=true", changed);
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body.errorCode).to.equal(4001);
    expect(r.body.errorMessage).to.contain("dryrun");
    const after = await operator.send("GET", "/accounts/acme/projects/demo");
    expect(after.body.revision).to.equal(before.body.revision);
  });

  it("refuses any query parameter an admin write does not take with 400, in both services, changing nothing", async () => {
    const user = await operator.send("PUT", "/accounts/acme/projects/demo/users/zed?force=true", {
      password: "zed-password-1",
      roles: ["Full access"],
    });
    const key = await operator.send("POST", "/accounts/acme/projects/demo/apikeys?dryRun=true", {
      name: "not-made",
      roles: ["Full access"],
    });
    const deletion = await operator.send("DELETE", "/accounts/acme/projects/demo?cascade=false");
    for (const r of [user, key, deletion]) {
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.errorCode).to.equal(4001);
    }
    expect((await operator.send("GET", "/accounts/acme/projects/demo/users/zed")).status).to.equal(404);
    const keys = await operator.listKeys("acme", "demo");
    expect(keys.body.map((k: { name: string }) => k.name)).to.not.include("not-made");
    expect((await operator.send("GET", "/accounts/acme/projects/demo")).status).to.equal(200);
  });
});
