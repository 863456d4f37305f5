/**
 * Records stored before incarnations were recorded keep working: a built-in
 * user without a project incarnation (id `<account>/<project>/<username>`) is
 * listed, logs in, and moves to its incarnation's id when written again; a
 * project without its account's incarnation is the account's project.
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("records from before incarnations", () => {
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;

  before(async () => {
    platform = await startPlatform();
    operator = adminClient(platform.baseUrl, platform.adminToken);
    expect((await operator.putAccount("acme")).status).to.equal(201);
    expect((await operator.putProject("acme", "shop", demoProject())).status).to.equal(201);
  });
  after(() => platform?.close());

  /** A user as an earlier release stored it. */
  async function legacyUser(username: string, password: string) {
    const { users } = platform.data.deps.users;
    await users.collection.insertOne({
      _id: `acme/shop/${username}` as never,
      account: "acme",
      project: "shop",
      username,
      passwordHash: await platform.data.deps.hasher.hash(password),
      roles: ["Full access"],
      globalsJson: "{}",
      updatedAt: new Date(),
    });
  }

  it("a legacy user is listed, logs in, and is written and deleted like any other", async () => {
    await legacyUser("old-timer", "old-timer-password");
    const listed = await operator.send("GET", "/accounts/acme/projects/shop/users");
    expect(listed.body.map((u: { username: string }) => u.username)).to.deep.equal(["old-timer"]);
    const shop = projectClient(platform.baseUrl, "acme", "shop");
    const login = await shop.login({ username: "old-timer", password: "old-timer-password" });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);

    const rewritten = await operator.putUser("acme", "shop", "old-timer", {
      password: "new-password-1",
      roles: ["No delete"],
    });
    expect(rewritten.status, JSON.stringify(rewritten.body)).to.equal(200);
    const after = await operator.send("GET", "/accounts/acme/projects/shop/users");
    expect(after.body).to.have.length(1);
    expect(after.body[0].roles).to.deep.equal(["No delete"]);
    expect((await shop.login({ username: "old-timer", password: "old-timer-password" })).status).to.equal(
      401,
    );
    expect((await shop.login({ username: "old-timer", password: "new-password-1" })).status).to.equal(200);
    const stored = await platform.data.deps.users.users.find({ username: "old-timer" }).lean().exec();
    expect(stored.map((d) => d._id)).to.have.length(1);
    expect(stored[0]!._id).to.not.equal("acme/shop/old-timer");

    await legacyUser("leaver", "leaver-password-1");
    expect((await operator.send("DELETE", "/accounts/acme/projects/shop/users/leaver")).status).to.equal(200);
    expect((await operator.send("GET", "/accounts/acme/projects/shop/users/leaver")).status).to.equal(404);
  });

  it("a project without its account's incarnation is still the account's project", async () => {
    await platform.data.deps.meta.projects
      .updateOne({ _id: "acme/shop" }, { $unset: { accountUid: 1 } })
      .exec();
    await platform.data.deps.projects.changed("acme", "shop");
    expect(
      (await operator.send("GET", "/accounts/acme/projects")).body.map((p: { name: string }) => p.name),
    ).to.deep.equal(["shop"]);
    const changed = await operator.putProject("acme", "shop", demoProject());
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    const key = await operator.keyWith("acme", "shop", ["Full access"]);
    expect((await projectClient(platform.baseUrl, "acme", "shop").get(key, "customer")).status).to.equal(200);
  });
});
