/**
 * The first end-to-end slice, through the edge on real stores:
 * admin API → login → insert, read, update, delete; the documented errors;
 * two accounts with identically named projects and tables never meet.
 */
import { expect } from "chai";
import { demoProject } from "../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient } from "../support/http.ts";
import { type Platform, startPlatform } from "../support/platform.ts";

describe("first slice through the edge", () => {
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let acme: ReturnType<typeof projectClient>;
  let key: string;

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    for (const account of ["acme", "globex"]) {
      expect((await admin.putAccount(account)).status).to.equal(201);
      expect((await admin.putProject(account, "demo", demoProject())).status).to.equal(201);
      const user = await admin.putUser(account, "demo", "alice", {
        password: `pw-${account}-123`,
        roles: ["Full access"],
      });
      expect(user.status).to.equal(201);
    }
    acme = projectClient(platform.baseUrl, "acme", "demo");
    const login = await acme.login({ username: "alice", password: "pw-acme-123" });
    expect(login.status).to.equal(200);
    key = login.body.apikey;
  });
  after(() => platform.close());

  it("answers readyz on the edge", async () => {
    expect((await call(platform.baseUrl, "GET", "/readyz")).status).to.equal(200);
  });

  it("logs in with a new key every time, in the documented shape", async () => {
    const a = await acme.login({ username: "alice", password: "pw-acme-123" });
    const b = await acme.login({ username: "alice", password: "pw-acme-123" });
    expect(a.body.apikey).to.be.a("string").and.not.equal(b.body.apikey);
    expect(a.body).to.include.keys("apikey", "expiration", "userIdentifier", "roles");
    expect(a.body.expiration).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
    expect(a.body.userIdentifier).to.equal("alice");
    expect(a.body.roles).to.deep.equal(["Full access"]);
  });

  it("inserts, reads, updates and deletes a row with checksums", async () => {
    const post = await acme.post(key, "customer", { name: "Jones", credit_limit: 1000, region: "west" });
    expect(post.status).to.equal(201);
    expect(post.body.statusCode).to.equal(201);
    const [inserted] = post.body.txsummary;
    expect(inserted["@metadata"]).to.include({ resource: "customer", verb: "INSERT" });
    expect(inserted["@metadata"].checksum).to.match(/^R:[0-9a-f]+$/);
    expect(inserted["@metadata"].href).to.equal(`${platform.baseUrl}${acme.root}/customer/Jones`);
    expect(inserted).to.include({ name: "Jones", balance: 0, credit_limit: 1000, region: "west" });

    const byKey = await acme.get(key, "customer/Jones");
    expect(byKey.status).to.equal(200);
    expect(byKey.body).to.have.length(1);
    const checksum = byKey.body[0]["@metadata"].checksum;
    expect(checksum).to.equal(inserted["@metadata"].checksum);

    const put = await acme.put(key, "customer/Jones", { "@metadata": { checksum }, credit_limit: 2000 });
    expect(put.status).to.equal(200);
    expect(put.body.txsummary[0]).to.include({ credit_limit: 2000, region: "west" });
    expect(put.body.txsummary[0]["@metadata"]).to.include({ verb: "UPDATE" });
    const newChecksum = put.body.txsummary[0]["@metadata"].checksum;
    expect(newChecksum).to.not.equal(checksum);

    const stale = await acme.put(key, "customer/Jones", { "@metadata": { checksum }, credit_limit: 3000 });
    expect(stale.status).to.equal(409);
    expect(stale.body.errorCode).to.equal(4091);

    const del = await acme.delete(key, `customer/Jones?checksum=${encodeURIComponent(newChecksum)}`);
    expect(del.status).to.equal(200);
    expect(del.body.txsummary[0]["@metadata"]).to.deep.equal({
      href: `${platform.baseUrl}${acme.root}/customer/Jones`,
      resource: "customer",
      verb: "DELETE",
    });
    expect((await acme.get(key, "customer/Jones")).body).to.deep.equal([]);
  });

  it("accepts an array on POST, generates integer keys, and deletes with override", async () => {
    await acme.post(key, "customer", { name: "Array Co" });
    const post = await acme.post(key, "purchaseorder", [
      { customer_name: "Array Co", amount_total: 5 },
      { customer_name: "Array Co", amount_total: 7 },
    ]);
    expect(post.status).to.equal(201);
    const [a, b] = post.body.txsummary.map((o: { order_number: number }) => o.order_number);
    expect(a).to.be.a("number");
    expect(b).to.equal(a + 1);
    const del = await acme.delete(key, `purchaseorder/${a}?checksum=override`);
    expect(del.status).to.equal(200);
    const typed = await acme.get(key, `purchaseorder/${b}`);
    expect(typed.body[0].order_number).to.equal(b);
  });

  describe("errors in the documented shape", () => {
    it("no key → 401/4011", async () => {
      const r = await acme.get(undefined, "customer");
      expect(r.status).to.equal(401);
      expect(r.body).to.include({ statusCode: 401, errorCode: 4011 });
      expect(r.body.errorMessage).to.be.a("string");
    });
    it("an acme key on globex → 401/4012", async () => {
      const r = await projectClient(platform.baseUrl, "globex", "demo").get(key, "customer");
      expect(r.status).to.equal(401);
      expect(r.body.errorCode).to.equal(4012);
    });
    it("unknown attribute and wrong type → 400/4003 naming the attribute", async () => {
      const unknown = await acme.post(key, "customer", { name: "X", nickname: "x" });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.errorCode).to.equal(4003);
      expect(unknown.body.errorMessage).to.contain("nickname");
      const wrong = await acme.post(key, "customer", { name: "X", credit_limit: "lots" });
      expect(wrong.body.errorCode).to.equal(4003);
      expect(wrong.body.errorMessage).to.contain("credit_limit");
    });
    it("operator objects in a body are a type error, not a query", async () => {
      const r = await acme.post(key, "customer", { name: { $gt: "" } });
      expect(r.status).to.equal(400);
      expect(r.body.errorCode).to.equal(4003);
    });
    it("non-JSON body → 415/4151", async () => {
      const r = await call(platform.baseUrl, "POST", `${acme.root}/customer`, {
        rawBody: "name=x",
        headers: { ...keyHeader(key), "content-type": "application/x-www-form-urlencoded" },
      });
      expect(r.status).to.equal(415);
      expect(r.body.errorCode).to.equal(4151);
    });
    it("PUT without a checksum → 400/4001", async () => {
      await acme.post(key, "customer", { name: "NoCk" });
      const r = await acme.put(key, "customer/NoCk", { credit_limit: 1 });
      expect(r.status).to.equal(400);
      expect(r.body.errorCode).to.equal(4001);
    });
    it("role forbids → 403/4031", async () => {
      await admin.putUser("acme", "demo", "nodel", { password: "nodel-pass-1", roles: ["No delete"] });
      const k = (await acme.login({ username: "nodel", password: "nodel-pass-1" })).body.apikey;
      await acme.post(k, "customer", { name: "Keep" });
      const r = await acme.delete(k, "customer/Keep?checksum=override");
      expect(r.status).to.equal(403);
      expect(r.body.errorCode).to.equal(4031);
    });
    it("unknown resource and unknown version → 404/4041", async () => {
      expect((await acme.get(key, "nothing")).body.errorCode).to.equal(4041);
      const r = await projectClient(platform.baseUrl, "acme", "demo", "v9").get(key, "customer");
      expect(r.status).to.equal(404);
      expect(r.body.errorCode).to.equal(4041);
    });
    it("an invalid project definition → 400 listing every problem with its JSON path", async () => {
      const bad = demoProject();
      (bad.tables as any).customer.key = ["nope"];
      (bad.tables as any).purchaseorder.columns.amount_total.type = "money";
      (bad.roles as any)["Region reader"].tables.customer.rowFilter = "region = = 1";
      const r = await admin.putProject("acme", "broken", bad);
      expect(r.status).to.equal(400);
      const paths = r.body.problems.map((p: { path: string }) => p.path);
      // The structural problem (a bad type) and the semantic ones in one answer.
      expect(paths).to.have.members([
        "$.tables.purchaseorder.columns.amount_total.type",
        "$.tables.customer.key[0]",
        '$.roles["Region reader"].tables.customer.rowFilter',
      ]);
      const fixedType = demoProject();
      (fixedType.tables as any).customer.key = ["nope"];
      (fixedType.roles as any)["Region reader"].tables.customer.rowFilter = "region = = 1";
      const r2 = await admin.putProject("acme", "broken", fixedType);
      const paths2 = r2.body.problems.map((p: { path: string }) => p.path);
      expect(paths2).to.include.members([
        "$.tables.customer.key[0]",
        '$.roles["Region reader"].tables.customer.rowFilter',
      ]);
    });
    it("the admin API needs the admin token", async () => {
      const r = await call(platform.baseUrl, "GET", "/admin/v1/accounts/acme");
      expect(r.status).to.equal(401);
    });
    it("a verb a route does not take → 405/4051 in the documented shape, with Allow", async () => {
      const auth = { authorization: `Bearer ${platform.adminToken}` };
      for (const [method, path] of [
        ["PATCH", "/admin/v1/accounts/acme"],
        ["POST", "/admin/v1/accounts/acme/projects/demo/users/alice"],
        ["PUT", "/admin/v1/accounts/acme/projects/demo/apikeys"],
      ] as const) {
        const r = await call(platform.baseUrl, method, path, { headers: auth, body: {} });
        expect(r.status, `${method} ${path}`).to.equal(405);
        expect(r.body, `${method} ${path}`).to.include({ statusCode: 405, errorCode: 4051 });
        expect(r.headers.get("allow"), `${method} ${path}`).to.be.a("string");
      }
    });
    it("the internal API is not reachable through the edge", async () => {
      const r = await call(platform.baseUrl, "GET", "/internal/v1/accounts/acme/projects/demo/settings");
      expect(r.status).to.equal(404);
    });
  });

  it("keeps accounts apart: same project and table names, separate rows", async () => {
    const globex = projectClient(platform.baseUrl, "globex", "demo");
    const gk = (await globex.login({ username: "alice", password: "pw-globex-123" })).body.apikey;
    await acme.post(key, "customer", { name: "Only In Acme" });
    await globex.post(gk, "customer", { name: "Only In Globex" });
    const acmeNames = (await acme.get(key, "customer?pagesize=100")).body.map(
      (c: { name: string }) => c.name,
    );
    const globexNames = (await globex.get(gk, "customer?pagesize=100")).body.map(
      (c: { name: string }) => c.name,
    );
    expect(acmeNames).to.include("Only In Acme").and.not.include("Only In Globex");
    expect(globexNames).to.deep.equal(["Only In Globex"]);
    // The same password does not log in to the other account's project.
    expect((await globex.login({ username: "alice", password: "pw-acme-123" })).status).to.equal(401);
  });
});
