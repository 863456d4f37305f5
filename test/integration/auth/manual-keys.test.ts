/** Manual keys through the admin API (docs/admin-api.md). */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("manual API keys", () => {
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let demo: ReturnType<typeof projectClient>;

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await admin.putProject("acme", "demo", demoProject());
    await admin.putUser("acme", "demo", "alice", { password: "alice-password", roles: ["Full access"] });
    demo = projectClient(platform.baseUrl, "acme", "demo");
  });
  after(() => platform.close());

  it("creates a key, shows its value once, and the key works with its roles and globals", async () => {
    const r = await admin.createKey("acme", "demo", {
      name: "West reporting",
      roles: ["Region reader"],
      userIdentifier: "svc-report",
      globals: { region: "west" },
      description: "nightly report",
    });
    expect(r.status).to.equal(201);
    expect(r.body).to.include({ name: "West reporting", status: "active", expiration: null, kind: "manual" });
    expect(r.body.roles).to.deep.equal(["Region reader"]);
    expect(r.body.apikey).to.match(/^tsk_/);
    expect(r.body.id).to.be.a("string");
    const fullKey = (await admin.createKey("acme", "demo", { name: "loader", roles: ["Full access"] })).body
      .apikey;
    await demo.post(fullKey, "customer", [
      { name: "W1", region: "west" },
      { name: "E1", region: "east" },
    ]);
    const rows = await demo.get(r.body.apikey, "customer");
    expect(rows.status).to.equal(200);
    expect(rows.body.map((c: { name: string }) => c.name)).to.deep.equal(["W1"]);
  });

  it("accepts an operator-chosen value and an expiration", async () => {
    const expiration = new Date(Date.now() + 3_600_000).toISOString().slice(0, 23);
    const r = await admin.createKey("acme", "demo", {
      name: "public demo key",
      roles: ["Full access"],
      apikey: "public-demo-key-123",
      expiration,
    });
    expect(r.status).to.equal(201);
    expect(r.body.apikey).to.equal("public-demo-key-123");
    expect(r.body.expiration).to.equal(expiration);
    expect((await demo.get("public-demo-key-123", "customer")).status).to.equal(200);
    const again = await admin.createKey("acme", "demo", {
      name: "dup",
      roles: [],
      apikey: "public-demo-key-123",
    });
    expect(again.status).to.equal(400);
  });

  it("rejects unknown roles, bad values and past expirations with 400 naming the problem", async () => {
    const unknownRole = await admin.createKey("acme", "demo", { name: "x", roles: ["Wizard"] });
    expect(unknownRole.status).to.equal(400);
    expect(unknownRole.body.errorMessage).to.contain("Wizard");
    const colon = await admin.createKey("acme", "demo", { name: "x", roles: [], apikey: "has:colon-inside" });
    expect(colon.status).to.equal(400);
    const past = await admin.createKey("acme", "demo", {
      name: "x",
      roles: [],
      expiration: "2001-01-01T00:00:00.000",
    });
    expect(past.status).to.equal(400);
    const noProject = await admin.createKey("acme", "nope", { name: "x", roles: [] });
    expect(noProject.status).to.equal(404);
  });

  it("lists every key of the project — generated and manual — without values or hashes", async () => {
    const login = await demo.login({ username: "alice", password: "alice-password" });
    const list = await admin.listKeys("acme", "demo");
    expect(list.status).to.equal(200);
    const text = JSON.stringify(list.body);
    expect(text).to.not.contain(login.body.apikey);
    expect(text).to.not.contain("public-demo-key-123");
    const generated = list.body.find((k: { kind: string }) => k.kind === "generated");
    expect(generated.name).to.equal("Temp key for demo [alice]");
    expect(generated.userIdentifier).to.equal("alice");
    for (const k of list.body)
      expect(k).to.have.all.keys(
        "id",
        "name",
        "kind",
        "status",
        "expiration",
        "roles",
        "userIdentifier",
        "description",
        "created",
      );
  });

  it("delete removes a key at once", async () => {
    const created = await admin.createKey("acme", "demo", { name: "temporary", roles: ["Full access"] });
    expect((await demo.get(created.body.apikey, "customer")).status).to.equal(200);
    expect((await admin.deleteKey("acme", "demo", created.body.id)).status).to.equal(200);
    const after = await demo.get(created.body.apikey, "customer");
    expect(after.status).to.equal(401);
    expect(after.body.errorCode).to.equal(4011);
    expect((await admin.deleteKey("acme", "demo", created.body.id)).status).to.equal(404);
    const ids = (await admin.listKeys("acme", "demo")).body.map((k: { id: string }) => k.id);
    expect(ids).to.not.include(created.body.id);
  });

  it("needs the admin token", async () => {
    const r = await adminClient(platform.baseUrl, "wrong-token").listKeys("acme", "demo");
    expect(r.status).to.equal(401);
  });
});
