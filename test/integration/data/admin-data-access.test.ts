/**
 * Account administrators on the data API, through the edge on the real stores:
 * an admin's own key (from the account's `@authentication`) reads and writes every
 * project of its account — one without users included — as a full-access key does
 * (transaction summary, rules, optimistic locking), creates no key of the project,
 * and every write it makes is in the account's audit trail under the admin's name.
 * A reader's key reads and writes nothing. Another account's projects, the
 * operator's token and `?auth=` stay closed; the key stops working the moment its
 * administrator signs out, is removed, gets a new password or a lesser role.
 */
import { expect } from "chai";
import type { AuditEntryView } from "../../../services/data/src/http/admin/audit-routes.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminAuthentication, adminKey, putAdmin } from "../../support/admins.ts";
import { adminClient, call, keyHeader, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { openSse } from "../../support/sse.ts";

type Entry = AuditEntryView & { actor: { kind: string; login?: string; role?: string } };

/** The demo project with a sum and a validation, as rules to see run. */
const SHOP = demoProject({
  rules: [
    { table: "customer", type: "sum", column: "balance", children: "orders", of: "amount_total" },
    {
      table: "customer",
      type: "validation",
      expression: "row.balance <= row.credit_limit",
      message: "balance over the limit",
    },
  ],
});

describe("account administrators' keys on the data API", function () {
  this.timeout(60_000);
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  let ann: string;
  let rita: string;
  let ben: string;
  const demo = () => projectClient(platform.baseUrl, "alpha", "demo");

  const expectStatus = (r: Reply, status: number, errorCode?: number) => {
    expect(r.status, JSON.stringify(r.body)).to.equal(status);
    if (errorCode !== undefined) expect(r.body.errorCode, JSON.stringify(r.body)).to.equal(errorCode);
  };

  /** The account's audit entries whose path is on the data API. */
  async function dataEntries(account: string): Promise<Entry[]> {
    const r = await operator.send("GET", `/accounts/${account}/audit?pagesize=1000`);
    expectStatus(r, 200);
    return (r.body as Entry[]).filter((e) => typeof e.path === "string" && e.path.startsWith("/rest/"));
  }

  before(async function () {
    this.timeout(120_000);
    // A generous sandbox limit: the rules are not what is tested here, and a loaded machine compiles them slowly.
    platform = await startPlatform({ LIVE_KEY_CHECK_MS: "100", SANDBOX_TIMEOUT_MS: "10000" });
    operator = adminClient(platform.baseUrl, platform.adminToken);
    for (const account of ["alpha", "beta"]) expectStatus(await operator.putAccount(account), 201);
    await putAdmin(operator, "alpha", "ann", "admin", "ann-password-1");
    await putAdmin(operator, "alpha", "rita", "reader", "rita-password-1");
    await putAdmin(operator, "beta", "ben", "admin", "ben-password-1");
    expectStatus(await operator.putProject("alpha", "demo", SHOP), 201);
    expectStatus(await operator.putProject("beta", "other", SHOP), 201);
    ann = await adminKey(platform.baseUrl, "alpha", "ann", "ann-password-1");
    rita = await adminKey(platform.baseUrl, "alpha", "rita", "rita-password-1");
    ben = await adminKey(platform.baseUrl, "beta", "ben", "ben-password-1");
  });
  after(() => platform?.close());

  it("an admin's key reads and writes a project without users as a full-access key: rules, txsummary, checksums", async () => {
    expect((await operator.send("GET", "/accounts/alpha/projects/demo/users")).body).to.deep.equal([]);
    const customer = await demo().post(ann, "customer", { name: "Acme", credit_limit: 100 });
    expectStatus(customer, 201);
    expect(customer.body.txsummary[0]).to.include({ name: "Acme", balance: 0, credit_limit: 100 });

    const order = await demo().post(ann, "purchaseorder", { customer_name: "Acme", amount_total: 40 });
    expectStatus(order, 201);
    const verbs = order.body.txsummary.map((o: { "@metadata": { resource: string; verb: string } }) => [
      o["@metadata"].resource,
      o["@metadata"].verb,
    ]);
    expect(verbs).to.deep.include.members([
      ["purchaseorder", "INSERT"],
      ["customer", "UPDATE"],
    ]);
    const acme = await demo().get(ann, "customer/Acme");
    expectStatus(acme, 200);
    expect(acme.body[0].balance).to.equal(40);

    // The validation refuses, as for any key, and nothing is written.
    const over = await demo().post(ann, "purchaseorder", { customer_name: "Acme", amount_total: 70 });
    expectStatus(over, 400, 4004);
    expect((await demo().get(ann, "customer/Acme")).body[0].balance).to.equal(40);

    // Optimistic locking: a stale checksum is a conflict; the current one updates.
    const checksum = acme.body[0]["@metadata"].checksum;
    const stale = { "@metadata": { checksum: "0000000000000000" }, name: "Acme", region: "west" };
    expectStatus(await demo().put(ann, "customer/Acme", stale), 409, 4091);
    const fresh = { "@metadata": { checksum }, name: "Acme", region: "west" };
    expectStatus(await demo().put(ann, "customer/Acme", fresh), 200);

    // Every table, every column, the whole API document.
    const tables = await demo().get(ann, "@tables");
    expect(tables.body.map((t: { name: string }) => t.name)).to.have.members(["customer", "purchaseorder"]);
    expectStatus(await demo().get(ann, "@docs"), 200);
    const nested = await demo().get(ann, "Customers/Acme");
    expect(nested.body[0].Orders).to.have.length(1);

    // No key of the project was made for it.
    expect((await operator.listKeys("alpha", "demo")).body).to.deep.equal([]);
  });

  it("records each write under the admin's name in the account's audit trail — refused ones too, reads never", async () => {
    const before = (await dataEntries("alpha")).length;
    const projectKey = await operator.keyWith("alpha", "demo", ["Full access"]);
    expectStatus(await demo().post(projectKey, "customer", { name: "ByKey" }), 201);
    expectStatus(await demo().get(ann, "customer"), 200);
    const written = await demo().post(ann, "customer", [{ name: "Beta" }, { name: "Gamma" }]);
    expectStatus(written, 201);
    const refused = await demo().post(ann, "customer", { name: "Beta" });
    expectStatus(refused, 400, 4003);
    expectStatus(await demo().delete(ann, "customer/Gamma?checksum=override"), 200);

    const entries = (await dataEntries("alpha")).slice(before);
    expect(
      entries.map((e) => [e.method, e.path, e.status, e.errorCode, e.summary]),
      JSON.stringify(entries),
    ).to.deep.equal([
      ["POST", "/rest/alpha/demo/v1/customer", 201, undefined, "demo/v1: customer: 2 inserted"],
      ["POST", "/rest/alpha/demo/v1/customer", 400, 4003, ""],
      ["DELETE", "/rest/alpha/demo/v1/customer/Gamma", 200, undefined, "demo/v1: customer: 1 deleted"],
    ]);
    for (const e of entries) expect(e.actor).to.deep.equal({ kind: "admin", login: "ann", role: "admin" });
    expect(entries[0]!.requestId).to.equal(written.headers.get("x-request-id"));
  });

  it("a reader's key reads every table and writes nothing (403/4031), its refusals audited", async () => {
    expectStatus(await demo().get(rita, "customer/Acme"), 200);
    const before = (await dataEntries("alpha")).length;
    expectStatus(await demo().post(rita, "customer", { name: "ByReader" }), 403, 4031);
    expectStatus(await demo().delete(rita, "customer/Acme?checksum=override"), 403, 4031);
    expectStatus(await demo().get(ann, "customer/ByReader"), 200);
    expect((await demo().get(ann, "customer/ByReader")).body).to.deep.equal([]);
    expect((await demo().get(ann, "customer/Acme")).body).to.have.length(1);
    const entries = (await dataEntries("alpha")).slice(before);
    expect(entries.map((e) => [e.method, e.status, e.errorCode, e.actor.login])).to.deep.equal([
      ["POST", 403, 4031, "rita"],
      ["DELETE", 403, 4031, "rita"],
    ]);
  });

  it("never opens another account's projects (401/4012, whether the project exists or not)", async () => {
    const other = projectClient(platform.baseUrl, "beta", "other");
    expectStatus(await other.get(ann, "customer"), 401, 4012);
    expectStatus(await other.post(ann, "customer", { name: "Intruder" }), 401, 4012);
    expectStatus(await projectClient(platform.baseUrl, "beta", "nothing").get(ann, "customer"), 401, 4012);
    expectStatus(await demo().get(ben, "customer"), 401, 4012);
    expectStatus(await demo().post(ben, "customer", { name: "Intruder" }), 401, 4012);
    expectStatus(await other.get(ben, "customer"), 200);
    expect((await other.get(ben, "customer/Intruder")).body).to.deep.equal([]);
    expect((await demo().get(ann, "customer/Intruder")).body).to.deep.equal([]);
    expect(await dataEntries("beta")).to.deep.equal([]);
  });

  it("the operator's token is not a key of the data API (401/4011), as documented", async () => {
    const token = platform.adminToken;
    for (const authorization of [`Bearer ${token}`, `Tessera ${token}:1`]) {
      const r = await call(platform.baseUrl, "GET", `${demo().root}/customer`, {
        headers: { authorization },
      });
      expectStatus(r, 401, 4011);
    }
  });

  it("is refused as ?auth= (401/4011): an admin key travels in the header only", async () => {
    const r = await call(platform.baseUrl, "GET", `${demo().root}/customer?auth=${ann}:1`);
    expectStatus(r, 401, 4011);
  });

  it("stops at once when its administrator signs out, is removed, gets a new password or becomes a reader", async () => {
    const login = async (name: string) => {
      await putAdmin(operator, "alpha", name, "admin", `${name}-password-1`);
      return adminKey(platform.baseUrl, "alpha", name, `${name}-password-1`);
    };
    const [out, removed, repassworded, demoted] = await Promise.all(
      ["olga", "rob", "pia", "dora"].map(login),
    );
    for (const key of [out, removed, repassworded, demoted])
      expectStatus(await demo().get(key!, "customer"), 200);

    expectStatus(await adminAuthentication(platform.baseUrl, "alpha", { apikey: out, disable: true }), 200);
    expectStatus(await demo().get(out!, "customer"), 401, 4014);

    expectStatus(await operator.send("DELETE", "/accounts/alpha/admins/rob"), 200);
    expectStatus(await demo().get(removed!, "customer"), 401, 4011);

    expectStatus(
      await operator.send("PUT", "/accounts/alpha/admins/pia", { password: "pia-password-2", role: "admin" }),
      200,
    );
    expectStatus(await demo().get(repassworded!, "customer"), 401, 4011);

    expectStatus(await operator.send("PUT", "/accounts/alpha/admins/dora", { role: "reader" }), 200);
    expectStatus(await demo().get(demoted!, "customer"), 200);
    expectStatus(await demo().post(demoted!, "customer", { name: "ByDora" }), 403, 4031);
  });

  it("a live query with an admin's key sees changes, and ends when the admin signs out", async () => {
    const key = await adminKey(platform.baseUrl, "alpha", "ann", "ann-password-1");
    const stream = await openSse(`${platform.baseUrl}${demo().root}/customer`, keyHeader(key));
    try {
      expect(stream.status, JSON.stringify(stream.body)).to.equal(200);
      await stream.next((e) => e.event === "snapshot");
      expectStatus(await demo().post(ann, "customer", { name: "Live" }), 201);
      await stream.next((e) => e.event === "change" && e.data.name === "Live");
      expectStatus(await adminAuthentication(platform.baseUrl, "alpha", { apikey: key, disable: true }), 200);
      const closed = await stream.next((e) => e.event === "closed");
      expect(closed.data.errorCode).to.equal(4014);
    } finally {
      stream.close();
    }
  });

  it("an account created again honours none of its predecessor's admin keys", async () => {
    await putAdmin(operator, "beta", "ben", "admin", "ben-password-1");
    expectStatus(await operator.send("DELETE", "/accounts/beta"), 200);
    expectStatus(await operator.putAccount("beta"), 201);
    await putAdmin(operator, "beta", "ben", "admin", "ben-password-1");
    expectStatus(await operator.putProject("beta", "other", SHOP), 201);
    expectStatus(await projectClient(platform.baseUrl, "beta", "other").get(ben, "customer"), 401, 4011);
  });
});
