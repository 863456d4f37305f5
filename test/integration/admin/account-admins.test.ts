/**
 * Account administrators: the operator creates an account's first admin; admins
 * manage the others (readers only read); nobody but the operator removes or
 * demotes the last admin, also when two admins try at once; administrators
 * belong to one incarnation of their account; a removed administrator's key, and
 * a key minted before a new password, stop working at the next request.
 */
import { expect } from "chai";
import { adminKey, putAdmin, withoutRequestId } from "../../support/admins.ts";
import { adminClient, call } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("account administrators", () => {
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  let account = "";
  let seq = 0;
  const as = (key: string) => adminClient(platform.baseUrl, key);

  before(async () => {
    platform = await startPlatform();
    operator = adminClient(platform.baseUrl, platform.adminToken);
  });
  after(() => platform.close());
  beforeEach(async () => {
    account = `acct${++seq}`;
    expect((await operator.putAccount(account)).status).to.equal(201);
  });

  it("the operator creates an admin; answers and listings never show a password or its hash", async () => {
    const created = await operator.send("PUT", `/accounts/${account}/admins/ann`, {
      password: "ann-password-1",
      role: "admin",
    });
    expect(created.status).to.equal(201);
    expect(created.body).to.have.keys(["login", "role", "created", "updated"]);
    expect(created.body).to.include({ login: "ann", role: "admin" });
    const again = await operator.send("PUT", `/accounts/${account}/admins/ann`, { role: "admin" });
    expect(again.status, "an update may keep the password").to.equal(200);
    const list = await operator.send("GET", `/accounts/${account}/admins`);
    expect(list.status).to.equal(200);
    expect(list.body).to.have.length(1);
    const one = await operator.send("GET", `/accounts/${account}/admins/ann`);
    for (const text of [JSON.stringify(created.body), JSON.stringify(list.body), JSON.stringify(one.body)]) {
      expect(text).to.not.match(/password|argon2|hash|stamp/i);
    }
  });

  it("refuses bad bodies and names with 400/4001, changing nothing", async () => {
    const path = `/accounts/${account}/admins`;
    for (const [login, body] of [
      ["ann", { role: "admin" }], // a new admin needs a password
      ["ann", { password: "short", role: "admin" }],
      ["ann", { password: "long-enough-1", role: "owner" }],
      ["ann", { password: "long-enough-1", role: "admin", extra: 1 }],
      ["bad name", { password: "long-enough-1", role: "admin" }],
    ] as const) {
      const r = await operator.send("PUT", `${path}/${encodeURIComponent(login)}`, body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.errorCode).to.equal(4001);
    }
    expect((await operator.send("GET", path)).body).to.deep.equal([]);
    const missing = await operator.send("GET", `${path}/ann`);
    expect(missing.status).to.equal(404);
  });

  it("an admin manages the other admins; a reader lists them and may change nothing", async () => {
    await putAdmin(operator, account, "ann", "admin", "ann-password-1");
    const ann = as(await adminKey(platform.baseUrl, account, "ann", "ann-password-1"));
    expect(
      (
        await ann.send("PUT", `/accounts/${account}/admins/bob`, {
          password: "bob-password-1",
          role: "admin",
        })
      ).status,
    ).to.equal(201);
    expect(
      (
        await ann.send("PUT", `/accounts/${account}/admins/rita`, {
          password: "rita-password-1",
          role: "reader",
        })
      ).status,
    ).to.equal(201);
    const rita = as(await adminKey(platform.baseUrl, account, "rita", "rita-password-1"));
    const list = await rita.send("GET", `/accounts/${account}/admins`);
    expect(list.status).to.equal(200);
    expect(list.body.map((a: { login: string; role: string }) => `${a.login}:${a.role}`)).to.deep.equal([
      "ann:admin",
      "bob:admin",
      "rita:reader",
    ]);
    for (const [method, path, body] of [
      ["PUT", "/admins/rita", { role: "admin" }],
      ["DELETE", "/admins/bob", undefined],
      ["PUT", "", { displayName: "mine now" }],
    ] as const) {
      const r = await rita.send(method, `/accounts/${account}${path}`, body);
      expect(r.status, `${method} ${path}`).to.equal(403);
      expect(r.body.errorCode).to.equal(4031);
    }
    expect((await ann.send("DELETE", `/accounts/${account}/admins/bob`)).status).to.equal(200);
    expect((await ann.send("GET", `/accounts/${account}/admins/bob`)).status).to.equal(404);
  });

  it("an admin may not remove or demote the last admin; the operator may", async () => {
    await putAdmin(operator, account, "ann", "admin", "ann-password-1");
    await putAdmin(operator, account, "rita", "reader", "rita-password-1");
    const ann = as(await adminKey(platform.baseUrl, account, "ann", "ann-password-1"));
    for (const [method, body] of [
      ["DELETE", undefined],
      ["PUT", { role: "reader" }],
    ] as const) {
      const r = await ann.send(method, `/accounts/${account}/admins/ann`, body);
      expect(r.status, method).to.equal(403);
      expect(r.body.errorCode).to.equal(4031);
      expect(r.body.errorMessage).to.contain("last admin");
    }
    expect((await ann.send("GET", `/accounts/${account}/admins/ann`)).body.role).to.equal("admin");
    // With a second admin, the first may step down.
    await putAdmin(ann, account, "bob", "admin", "bob-password-1");
    expect((await ann.send("PUT", `/accounts/${account}/admins/ann`, { role: "reader" })).status).to.equal(
      200,
    );
    const bob = as(await adminKey(platform.baseUrl, account, "bob", "bob-password-1"));
    expect((await bob.send("DELETE", `/accounts/${account}/admins/bob`)).status).to.equal(403);
    expect((await operator.send("DELETE", `/accounts/${account}/admins/bob`)).status).to.equal(200);
  });

  it("two admins removing each other at the same moment leave the account one admin", async () => {
    for (let round = 0; round < 5; round++) {
      await putAdmin(operator, account, "ann", "admin", "ann-password-1");
      await putAdmin(operator, account, "bob", "admin", "bob-password-1");
      const ann = as(await adminKey(platform.baseUrl, account, "ann", "ann-password-1"));
      const bob = as(await adminKey(platform.baseUrl, account, "bob", "bob-password-1"));
      const [a, b] = await Promise.all([
        ann.send("DELETE", `/accounts/${account}/admins/bob`),
        bob.send("DELETE", `/accounts/${account}/admins/ann`),
      ]);
      const statuses = [a.status, b.status].sort();
      // The second either found its own admin gone (401: its key no longer counts) or was the last one (403).
      expect(statuses[0], `round ${round}`).to.equal(200);
      expect(statuses[1], `round ${round}`).to.be.oneOf([401, 403]);
      const left = (await operator.send("GET", `/accounts/${account}/admins`)).body;
      expect(left, `round ${round}`).to.have.length(1);
    }
  });

  it("a removed admin's key, and a key from before a new password, stop at the next request; a new role applies at once", async () => {
    await putAdmin(operator, account, "ann", "admin", "ann-password-1");
    await putAdmin(operator, account, "bob", "admin", "bob-password-1");
    const bobKey = await adminKey(platform.baseUrl, account, "bob", "bob-password-1");
    expect((await as(bobKey).send("GET", `/accounts/${account}`)).status).to.equal(200);

    await operator.send("PUT", `/accounts/${account}/admins/bob`, { role: "reader" });
    const demoted = await as(bobKey).send("PUT", `/accounts/${account}`, { displayName: "x" });
    expect(demoted.status).to.equal(403);
    const revalidated = await call(
      platform.baseUrl,
      "POST",
      `/admin/v1/accounts/${account}/@authentication`,
      {
        body: { apikey: bobKey },
      },
    );
    expect(revalidated.body.roles, "revalidation shows the role in force").to.deep.equal(["reader"]);
    expect((await as(bobKey).send("GET", `/accounts/${account}`)).status).to.equal(200);

    await operator.send("PUT", `/accounts/${account}/admins/bob`, {
      role: "reader",
      password: "bob-password-2",
    });
    const stale = await as(bobKey).send("GET", `/accounts/${account}`);
    expect(stale.status).to.equal(401);
    expect(stale.body.errorCode).to.equal(4011);

    const newKey = await adminKey(platform.baseUrl, account, "bob", "bob-password-2");
    expect((await as(newKey).send("GET", `/accounts/${account}`)).status).to.equal(200);
    await operator.send("DELETE", `/accounts/${account}/admins/bob`);
    const gone = await as(newKey).send("GET", `/accounts/${account}`);
    expect(gone.status).to.equal(401);
    expect(gone.body.errorCode).to.equal(4011);
  });

  it("a deleted and re-created account has none of its predecessor's admins, and their keys open nothing", async () => {
    await putAdmin(operator, account, "ann", "admin", "ann-password-1");
    const annKey = await adminKey(platform.baseUrl, account, "ann", "ann-password-1");
    expect((await operator.send("DELETE", `/accounts/${account}`)).status).to.equal(200);
    const stale = await as(annKey).send("GET", `/accounts/${account}`);
    expect(stale.status).to.equal(401);
    expect(stale.body.errorCode).to.equal(4011);

    expect((await operator.putAccount(account)).status).to.equal(201);
    expect((await operator.send("GET", `/accounts/${account}/admins`)).body).to.deep.equal([]);
    const again = await as(annKey).send("GET", `/accounts/${account}`);
    expect(again.status).to.equal(401);
    expect(again.body.errorCode).to.equal(4011);
    const login = await call(platform.baseUrl, "POST", `/admin/v1/accounts/${account}/@authentication`, {
      body: { username: "ann", password: "ann-password-1" },
    });
    expect(login.status).to.equal(401);
    expect(login.body.errorCode).to.equal(4015);
  });

  it("an admin may rename the account but neither delete it nor create another", async () => {
    await putAdmin(operator, account, "ann", "admin", "ann-password-1");
    const ann = as(await adminKey(platform.baseUrl, account, "ann", "ann-password-1"));
    const renamed = await ann.send("PUT", `/accounts/${account}`, { displayName: "Ann's" });
    expect(renamed.status).to.equal(200);
    expect((await ann.send("GET", `/accounts/${account}`)).body.displayName).to.equal("Ann's");
    const del = await ann.send("DELETE", `/accounts/${account}`);
    expect(del.status).to.equal(403);
    expect(del.body.errorCode).to.equal(4031);
    const other = await ann.send("PUT", `/accounts/${account}x`, {});
    expect(other.status).to.equal(404);
    expect(withoutRequestId(other.body)).to.deep.equal({
      statusCode: 404,
      errorCode: 4041,
      errorMessage: `No account '${account}x'`,
    });
    expect((await operator.send("GET", `/accounts/${account}x`)).status).to.equal(404);
  });
});
