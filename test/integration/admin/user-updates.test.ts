/**
 * Changing a built-in user through the admin API: a PUT without `password` changes
 * the user's roles, globals and key lifetime and keeps the password (the user logs in
 * with it as before); a new user needs one (400/4001, and nothing is stored).
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("built-in users: changes without a password", () => {
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  let shop: ReturnType<typeof projectClient>;

  before(async () => {
    platform = await startPlatform();
    operator = adminClient(platform.baseUrl, platform.adminToken);
    await operator.putAccount("acme");
    expect((await operator.putProject("acme", "shop", demoProject())).status).to.equal(201);
    shop = projectClient(platform.baseUrl, "acme", "shop");
  });
  after(() => platform.close());

  it("changes roles, globals and key lifetime and keeps the password", async () => {
    const made = await operator.putUser("acme", "shop", "alice", {
      password: "alice-password",
      roles: ["Full access"],
    });
    expect(made.status).to.equal(201);
    const changed = await operator.putUser("acme", "shop", "alice", {
      roles: ["Region reader"],
      globals: { region: "north" },
      keyLifetimeSeconds: 600,
    });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body).to.deep.equal({
      username: "alice",
      roles: ["Region reader"],
      globals: { region: "north" },
      keyLifetimeSeconds: 600,
    });
    expect(changed.headers.get("etag")).to.not.equal(made.headers.get("etag"));

    const login = await shop.login({ username: "alice", password: "alice-password" });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    expect(login.body.roles).to.deep.equal(["Region reader"]);
    const lifetime = Date.parse(`${login.body.expiration}Z`) - Date.now();
    expect(lifetime).to.be.within(500_000, 610_000);

    const audit = await operator.send("GET", "/accounts/acme/audit?order=newest&kind=user&pagesize=1");
    expect(audit.body[0].summary).to.equal("user 'alice' updated with roles [Region reader], password kept");
  });

  it("refuses a new user without a password and stores nothing", async () => {
    const r = await operator.putUser("acme", "shop", "bob", { roles: ["Full access"] });
    expect(r.status).to.equal(400);
    expect(r.body.errorCode).to.equal(4001);
    expect(r.body.errorMessage).to.equal("A new user needs a password");
    expect((await operator.send("GET", "/accounts/acme/projects/shop/users/bob")).status).to.equal(404);
  });
});
