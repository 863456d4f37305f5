/**
 * The one name grammar (docs/names.md) through the edge: names that a client
 * would resolve away (`..`), that reach an object's prototype machinery, or that
 * cannot be addressed are refused with 400 and change nothing. Names stored before
 * the grammar stay readable and deletable, and the operator's name check lists them.
 * Paths are sent as written (node:http), as a client that does not normalise them would.
 */
import http from "node:http";
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("name grammar", function () {
  this.timeout(60_000);
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  const operator = () => ({ authorization: `Bearer ${platform.adminToken}` });

  /** A request whose path is sent exactly as given (fetch would resolve `..`). */
  function raw(method: string, path: string, body?: unknown): Promise<Reply> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers = { ...operator(), ...(text ? { "content-type": "application/json" } : {}) };
    return new Promise((resolve, reject) => {
      const url = new URL(platform.baseUrl);
      const req = http.request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          data += c;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: data ? JSON.parse(data) : undefined,
            headers: new Headers(),
          }),
        );
      });
      req.on("error", reject);
      req.end(text);
    });
  }

  function expectRefused(r: Reply): void {
    expect(r.status, JSON.stringify(r.body)).to.equal(400);
    expect(r.body).to.include.keys("statusCode", "errorCode", "errorMessage", "requestId");
    expect(r.body.errorCode).to.be.oneOf([4001, 4003]);
  }

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    expect((await admin.putAccount("acme")).status).to.equal(201);
    expect((await admin.putProject("acme", "p", demoProject())).status).to.equal(201);
  });
  after(async () => platform.close());

  for (const name of ["..", ".", "..."]) {
    it(`refuses a user named '${name}' and creates none`, async () => {
      expectRefused(
        await raw("PUT", `/admin/v1/accounts/acme/projects/p/users/${name}`, {
          password: "pw-123456",
          roles: [],
        }),
      );
      expect((await admin.send("GET", "/accounts/acme/projects/p/users")).body).to.deep.equal([]);
    });
  }

  it("refuses an administrator named '..' and creates none", async () => {
    expectRefused(
      await raw("PUT", "/admin/v1/accounts/acme/admins/..", { password: "pw-123456", role: "admin" }),
    );
    const admins = (await admin.send("GET", "/accounts/acme/admins")).body as { login: string }[];
    expect(admins.map((a) => a.login)).not.to.include("..");
  });

  for (const name of ["constructor", "prototype"]) {
    it(`refuses a role named '${name}' with 400 naming it`, async () => {
      const r = await admin.putProject("acme", "roles", demoProject({ roles: { [name]: { tables: {} } } }));
      expectRefused(r);
      expect(r.body.problems).to.deep.include({
        path: `$.roles.${name}`,
        message: `role name '${name}' is reserved`,
      });
      expect((await admin.send("GET", "/accounts/acme/projects/roles")).status).to.equal(404);
    });
  }

  it("refuses a role named '__proto__' with 400 (not later as an unknown role)", async () => {
    const text = JSON.stringify(demoProject()).replace('"roles":{', '"roles":{"__proto__":{"tables":{}},');
    const r = await call(platform.baseUrl, "PUT", "/admin/v1/accounts/acme/projects/proto", {
      rawBody: text,
      headers: { ...operator(), "content-type": "application/json" },
    });
    expectRefused(r);
    expect(r.body.errorMessage).to.contain("__proto__");
  });

  it("refuses a table named 'constructor'", async () => {
    const tables = { constructor: { key: ["id"], columns: { id: { type: "integer" } } } };
    expectRefused(await admin.putProject("acme", "tables", { tables, apiVersions: { v1: {} } }));
  });

  it("refuses a project named 'prototype'", async () => {
    expectRefused(await admin.putProject("acme", "prototype", demoProject()));
  });

  it("refuses a row whose key is the empty string, storing nothing", async () => {
    const key = await admin.keyWith("acme", "p", ["Full access"]);
    const demo = projectClient(platform.baseUrl, "acme", "p");
    expectRefused(await demo.post(key, "customer", { name: "" }));
    expect((await demo.get(key, "customer")).body).to.deep.equal([]);
  });

  it("refuses a row key of dots only or with a bidi override, storing nothing", async () => {
    const key = await admin.keyWith("acme", "p", ["Full access"]);
    const demo = projectClient(platform.baseUrl, "acme", "p");
    expectRefused(await demo.post(key, "customer", { name: ".." }));
    expectRefused(await demo.post(key, "customer", { name: "a\u202eb" }));
    expect((await demo.get(key, "customer")).body).to.deep.equal([]);
  });

  it("refuses a key id that is not one (DELETE …/apikeys/constructor) with 400", async () => {
    expectRefused(await admin.deleteKey("acme", "p", "constructor"));
  });

  it("keeps a user stored before the grammar readable and deletable, listed by the operator's name check", async () => {
    const { meta, users } = platform.data.deps;
    const project = (await meta.getProject("acme", "p"))!;
    expect(await users.get(project, "alice")).to.equal(null);
    expect((await admin.putUser("acme", "p", "alice", { password: "pw-123456", roles: [] })).status).to.equal(
      201,
    );
    const alice = (await users.get(project, "alice"))!;
    // As an earlier release accepted it.
    await users.put(project, { ...alice, username: ".." });
    const check = await call(platform.baseUrl, "GET", "/admin/v1/name-check", { headers: operator() });
    expect(check.status).to.equal(200);
    expect(check.body.findings).to.deep.include({
      account: "acme",
      project: "p",
      kind: "user",
      name: "..",
      problem: "must not consist of dots only",
    });
    expect((await raw("GET", "/admin/v1/accounts/acme/projects/p/users/..")).status).to.equal(200);
    expectRefused(
      await raw("PUT", "/admin/v1/accounts/acme/projects/p/users/..", { password: "pw-654321", roles: [] }),
    );
    expect((await raw("DELETE", "/admin/v1/accounts/acme/projects/p/users/..")).status).to.equal(200);
    expect((await admin.send("GET", "/accounts/acme/projects/p")).status).to.equal(200);
  });

  it("keeps serving a project whose stored definition has a role named 'constructor', refusing its PUT", async () => {
    const definition = demoProject({
      roles: { constructor: { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
    });
    // As an earlier release stored it.
    const { meta } = platform.data.deps;
    const written = await meta.writeProject("acme", "legacy", definition, {
      accountUid: meta.accountUid((await meta.getAccount("acme"))!),
      uid: "legacy-uid",
      revision: 0,
    });
    expect(written?.revision).to.equal(1);
    const key = await admin.keyWith("acme", "legacy", ["constructor"]);
    const legacy = projectClient(platform.baseUrl, "acme", "legacy");
    expect((await legacy.post(key, "customer", { name: "Old" })).status).to.equal(201);
    expect((await legacy.get(key, "customer/Old")).body[0].name).to.equal("Old");
    const check = await call(platform.baseUrl, "GET", "/admin/v1/name-check", { headers: operator() });
    expect(check.body.findings).to.deep.include({
      account: "acme",
      project: "legacy",
      kind: "definition",
      name: "$.roles.constructor",
      problem: "role name 'constructor' is reserved",
    });
    expectRefused(await admin.putProject("acme", "legacy", definition));
    expect((await admin.send("GET", "/accounts/acme/projects/legacy")).body.revision).to.equal(1);
  });

  it("keeps the name check the operator's alone", async () => {
    const login = await admin.send("PUT", "/accounts/acme/admins/ann", {
      password: "ann-secret-1",
      role: "admin",
    });
    expect(login.status).to.equal(201);
    const r = await call(platform.baseUrl, "POST", "/admin/v1/accounts/acme/@authentication", {
      body: { username: "ann", password: "ann-secret-1" },
    });
    const check = await call(platform.baseUrl, "GET", "/admin/v1/name-check", {
      headers: { authorization: `Bearer ${r.body.apikey}` },
    });
    expect(check.status).to.equal(403);
  });
});
