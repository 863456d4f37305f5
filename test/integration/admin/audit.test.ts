/**
 * The audit trail through the edge: every admin change — served by the data
 * service or by the auth service (keys, an admin's own password) — is recorded
 * with who, what, when, the outcome and the request id, and never a password or
 * a key value; readers may page through it; an account created again does not
 * see its predecessor's trail, which the operator still finds.
 */
import { expect } from "chai";
import type { AuditEntryView } from "../../../services/data/src/http/admin/audit-routes.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminAuthentication, adminKey, putAdmin } from "../../support/admins.ts";
import { adminClient, call } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

type Entry = AuditEntryView & { actor: { login?: string } };

describe("audit trail", () => {
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  const secrets = [
    "ann-password-1",
    "ann-password-2",
    "rita-password-1",
    "alice-password",
    "chosen-key-value-1",
  ];

  /** Every entry of a listing, following next_batch. */
  async function readAll(client: ReturnType<typeof adminClient>, first: string): Promise<Entry[]> {
    const entries: Entry[] = [];
    let path: string | undefined = first;
    while (path) {
      const r = await client.send("GET", path);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const last = r.body[r.body.length - 1];
      const next: string | undefined = last?.["@metadata"]?.next_batch;
      entries.push(...(next ? r.body.slice(0, -1) : r.body));
      path = next?.slice(`${platform.baseUrl}/admin/v1`.length);
    }
    return entries;
  }

  /** A new account with ann (admin) and rita (reader), signed in. */
  async function accountWithAnnAndRita(account: string) {
    await operator.putAccount(account);
    await putAdmin(operator, account, "ann", "admin", "ann-password-1");
    await putAdmin(operator, account, "rita", "reader", "rita-password-1");
    const signedIn = async (login: string, password: string) =>
      adminClient(platform.baseUrl, await adminKey(platform.baseUrl, account, login, password));
    return { ann: await signedIn("ann", "ann-password-1"), rita: await signedIn("rita", "rita-password-1") };
  }

  before(async () => {
    platform = await startPlatform();
    operator = adminClient(platform.baseUrl, platform.adminToken);
  });
  after(() => platform.close());

  it("records the changes of both services with who, what, outcome and request id — never a secret", async () => {
    const { ann, rita } = await accountWithAnnAndRita("acme");

    const put = await ann.send("PUT", "/accounts/acme/projects/demo", demoProject());
    expect(put.status).to.equal(201);
    await ann.send("PUT", "/accounts/acme/projects/demo?dryRun=true", demoProject());
    await ann.send("PUT", "/accounts/acme/projects/demo", { tables: 5 });
    await ann.send("PUT", "/accounts/acme/projects/demo/users/alice", {
      password: "alice-password",
      roles: ["Full access"],
    });
    const key = await ann.send("POST", "/accounts/acme/projects/demo/apikeys", {
      name: "nightly",
      roles: ["Full access"],
      apikey: "chosen-key-value-1",
    });
    expect(key.status).to.equal(201);
    await ann.send("DELETE", `/accounts/acme/projects/demo/apikeys/${key.body.id}`);
    await rita.send("DELETE", "/accounts/acme/projects/demo");
    await ann.send("GET", "/accounts/acme/projects/demo");
    const changed = await adminAuthentication(
      platform.baseUrl,
      "acme",
      { username: "ann", password: "ann-password-1", newPassword: "ann-password-2" },
      "?enablePasswordChange!",
    );
    expect(changed.body.changePasswordResult).to.equal("success");

    const entries = await readAll(rita, "/accounts/acme/audit?pagesize=3");
    const lines = entries.map(
      (e) => `${e.actor.login ?? e.actor.kind} ${e.method} ${e.path} ${e.status} ${e.summary}`,
    );
    expect(lines).to.deep.equal([
      "operator PUT /admin/v1/accounts/acme 201 account created (no display name)",
      "operator PUT /admin/v1/accounts/acme/admins/ann 201 admin 'ann' created: role admin, password set",
      "operator PUT /admin/v1/accounts/acme/admins/rita 201 admin 'rita' created: role reader, password set",
      "ann PUT /admin/v1/accounts/acme/projects/demo 201 tables +2, apiVersions +1, roles +3, authentication changed",
      "ann PUT /admin/v1/accounts/acme/projects/demo 400 ",
      "ann PUT /admin/v1/accounts/acme/projects/demo/users/alice 201 user 'alice' created with roles [Full access]",
      `ann POST /admin/v1/accounts/acme/projects/demo/apikeys 201 key 'nightly' created (id ${key.body.id}, roles [Full access], no expiry)`,
      `ann DELETE /admin/v1/accounts/acme/projects/demo/apikeys/${key.body.id} 200 key ${key.body.id} deleted`,
      "rita DELETE /admin/v1/accounts/acme/projects/demo 403 ",
      "ann POST /admin/v1/accounts/acme/@authentication 200 admin 'ann' changed their own password (their other keys are revoked)",
    ]);
    expect(entries[4]!.errorCode).to.equal(4001);
    expect(entries[8]!.errorCode).to.equal(4031);
    expect(entries[3]!.requestId).to.equal(put.headers.get("x-request-id"));
    expect(entries[3]!.clientRequestId, "the edge's").to.be.a("string");
    expect(entries[6]!.requestId).to.equal(key.headers.get("x-request-id"));
    for (const e of entries) {
      expect(e.account).to.equal("acme");
      expect(Date.parse(e.at ?? "")).to.be.closeTo(Date.now(), 60_000);
    }
    const text = JSON.stringify(entries);
    for (const secret of [...secrets, key.body.apikey]) expect(text).to.not.contain(secret);
  });

  it("pages from a time or an entry's id, and refuses other 'since' values", async () => {
    await operator.putAccount("paged");
    const start = new Date().toISOString();
    for (let i = 0; i < 5; i++) await operator.send("PUT", "/accounts/paged", { displayName: `v${i}` });
    const all = await readAll(operator, "/accounts/paged/audit?pagesize=2");
    expect(all.map((e) => e.summary).slice(-5)).to.deep.equal(
      [0, 1, 2, 3, 4].map((i) => `account updated (display name 'v${i}')`),
    );
    const fromStart = await readAll(operator, `/accounts/paged/audit?since=${encodeURIComponent(start)}`);
    expect(fromStart).to.have.length(5);
    const afterThird = await readAll(operator, `/accounts/paged/audit?since=${all[all.length - 3]!.id}`);
    expect(afterThird.map((e) => e.summary)).to.deep.equal([
      "account updated (display name 'v3')",
      "account updated (display name 'v4')",
    ]);
    for (const since of ["yesterday", "12", "2024-13-45T00:00:00Z"]) {
      const r = await operator.send("GET", `/accounts/paged/audit?since=${since}`);
      expect(r.status, since).to.equal(400);
    }
    expect((await operator.send("GET", "/accounts/paged/audit?pagesize=0")).status).to.equal(400);
  });

  it("lists newest first and filters by who, kind of change and refusal, keeping both in next_batch", async () => {
    const { ann, rita } = await accountWithAnnAndRita("sifted");
    expect((await ann.send("PUT", "/accounts/sifted/projects/demo", demoProject())).status).to.equal(201);
    await ann.send("PUT", "/accounts/sifted/projects/demo", { tables: 5 });
    for (const name of ["u1", "u2", "u3"]) {
      await ann.send("PUT", `/accounts/sifted/projects/demo/users/${name}`, {
        password: "user-password",
        roles: ["Full access"],
      });
    }
    await rita.send("DELETE", "/accounts/sifted/projects/demo/users/u1");
    const line = (e: Entry) => `${e.actor.login ?? e.actor.kind} ${e.method} ${e.path} ${e.status}`;
    const demo = "/admin/v1/accounts/sifted/projects/demo";

    const newest = await readAll(operator, "/accounts/sifted/audit?order=newest&pagesize=2");
    const oldest = await readAll(operator, "/accounts/sifted/audit");
    expect(newest.map(line)).to.deep.equal([...oldest].reverse().map(line));
    expect(newest.map(line).slice(0, 2)).to.deep.equal([
      `rita DELETE ${demo}/users/u1 403`,
      `ann PUT ${demo}/users/u3 201`,
    ]);

    const annsUsers = await readAll(
      rita,
      "/accounts/sifted/audit?order=newest&by=admin:ann&kind=user&pagesize=1",
    );
    expect(annsUsers.map(line)).to.deep.equal([
      `ann PUT ${demo}/users/u3 201`,
      `ann PUT ${demo}/users/u2 201`,
      `ann PUT ${demo}/users/u1 201`,
    ]);
    const refused = await readAll(rita, "/accounts/sifted/audit?refused=true&pagesize=1");
    expect(refused.map(line)).to.deep.equal([`ann PUT ${demo} 400`, `rita DELETE ${demo}/users/u1 403`]);
    const accepted = await readAll(rita, "/accounts/sifted/audit?refused=false&kind=project");
    expect(accepted.map(line)).to.deep.equal([`ann PUT ${demo} 201`]);
    const operators = await readAll(rita, "/accounts/sifted/audit?by=operator&kind=admin");
    expect(operators.map(line)).to.deep.equal([
      "operator PUT /admin/v1/accounts/sifted/admins/ann 201",
      "operator PUT /admin/v1/accounts/sifted/admins/rita 201",
    ]);
    const account = await readAll(rita, "/accounts/sifted/audit?kind=account");
    expect(account.map(line)).to.deep.equal(["operator PUT /admin/v1/accounts/sifted 201"]);

    for (const query of ["order=up", "by=ann", "by=admin:", "kind=table", "refused=maybe", "before=12"]) {
      const r = await rita.send("GET", `/accounts/sifted/audit?${query}`);
      expect(r.status, query).to.equal(400);
      expect(r.body.errorCode, query).to.equal(4001);
    }
  });

  it("an account created again starts a new trail; the operator still finds the old one", async () => {
    await operator.putAccount("phoenix");
    await putAdmin(operator, "phoenix", "ann", "admin", "ann-password-1");
    const old = await operator.send("GET", "/accounts/phoenix/audit");
    const oldIncarnation = old.body[0].incarnation;
    expect(old.body).to.have.length(2);
    expect((await operator.send("DELETE", "/accounts/phoenix")).status).to.equal(200);
    await operator.putAccount("phoenix");
    await putAdmin(operator, "phoenix", "ann", "admin", "ann-password-1");
    const ann = adminClient(
      platform.baseUrl,
      await adminKey(platform.baseUrl, "phoenix", "ann", "ann-password-1"),
    );
    const fresh = await readAll(ann, "/accounts/phoenix/audit");
    expect(fresh.map((e) => e.summary)).to.deep.equal([
      "account created (no display name)",
      "admin 'ann' created: role admin, password set",
    ]);
    expect(fresh[0]!.incarnation).to.not.equal(oldIncarnation);

    const platformWide = await readAll(operator, "/audit?account=phoenix&pagesize=2");
    expect(
      platformWide.map((e) => `${e.incarnation === oldIncarnation ? "old" : "new"} ${e.method} ${e.summary}`),
    ).to.deep.equal([
      "old PUT account created (no display name)",
      "old PUT admin 'ann' created: role admin, password set",
      "old DELETE account deleted with 0 project(s)",
      "new PUT account created (no display name)",
      "new PUT admin 'ann' created: role admin, password set",
    ]);
    const denied = await ann.send("GET", "/audit?account=phoenix");
    expect(denied.status).to.equal(403);
    expect(denied.body.errorCode).to.equal(4031);
  });

  it("records a change whatever the length of what it names, shortened", async () => {
    await operator.putAccount("lengthy");
    const roles = Array.from({ length: 8 }, (_, i) => `${"r".repeat(95)}-${i}`);
    const definition = demoProject();
    for (const role of roles) (definition.roles as Record<string, unknown>)[role] = { tables: {} };
    expect((await operator.putProject("lengthy", "demo", definition)).status).to.equal(201);
    const user = await operator.putUser("lengthy", "demo", "many", { password: "many-password", roles });
    expect(user.status, JSON.stringify(user.body)).to.equal(201);
    const long = await operator.send("DELETE", `/accounts/lengthy/projects/demo/users/${"t".repeat(1500)}`);
    expect(long.status).to.equal(400);
    const entries = await readAll(operator, "/accounts/lengthy/audit");
    const created = entries.find((e) => e.path.endsWith("/users/many"))!;
    expect(created.summary.length).to.equal(500);
    expect(created.summary).to.match(/^user 'many' created with roles \[r+-0, .*…$/);
    const refused = entries.find((e) => e.method === "DELETE")!;
    expect(refused.status).to.equal(400);
    expect(refused.path).to.have.length(1000);
    expect(refused.path).to.match(/\/t+…$/);
  });

  it("never records what a key deletion names unless it is the id of one of the project's keys", async () => {
    await operator.putAccount("keyed");
    await operator.putProject("keyed", "demo", demoProject());
    const r = await operator.send("DELETE", "/accounts/keyed/projects/demo/apikeys/maybe-a-key-value");
    expect(r.status).to.equal(404);
    const entry = (await readAll(operator, "/accounts/keyed/audit")).find((e) => e.method === "DELETE")!;
    expect(entry.path).to.equal("/admin/v1/accounts/keyed/projects/demo/apikeys/(not a key id)");
    expect(entry.summary).to.equal("");
  });

  it("does not record reads, nor requests refused before the caller is known or for another account", async () => {
    await operator.putAccount("quiet");
    await operator.putAccount("other");
    await putAdmin(operator, "other", "olga", "admin", "olga-password-1");
    const olga = adminClient(
      platform.baseUrl,
      await adminKey(platform.baseUrl, "other", "olga", "olga-password-1"),
    );
    await operator.send("GET", "/accounts/quiet");
    await call(platform.baseUrl, "PUT", "/admin/v1/accounts/quiet", { body: {} });
    expect((await olga.send("PUT", "/accounts/quiet", { displayName: "mine" })).status).to.equal(404);
    const entries = await readAll(operator, "/accounts/quiet/audit");
    expect(entries.map((e) => e.summary)).to.deep.equal(["account created (no display name)"]);
  });
});
