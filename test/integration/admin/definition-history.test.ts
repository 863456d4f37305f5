/**
 * Definition history through the edge: every accepted PUT is kept as a
 * revision (who, when, the diff's summary); a dry run answers the diff and
 * changes nothing; a rollback applies an old revision as a new one, checked
 * again; `ETag`/`If-Match` make a change against a stale revision fail with
 * 412/4121 — also when many are sent at once against the same revision.
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminKey, putAdmin } from "../../support/admins.ts";
import { adminClient, call, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("project definition history", () => {
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  let ann: ReturnType<typeof adminClient>;
  const account = "acme";
  let seq = 0;
  let project = "";
  const path = (rest = "") => `/accounts/${account}/projects/${project}${rest}`;
  const withSegment = () => {
    const d = demoProject();
    (d.tables.customer.columns as Record<string, unknown>).segment = { type: "string" };
    return d;
  };
  const putWith = (definition: unknown, headers: Record<string, string>, query = "") =>
    call(platform.baseUrl, "PUT", `/admin/v1${path()}${query}`, {
      body: definition,
      headers: { authorization: `Bearer ${platform.adminToken}`, ...headers },
    });

  before(async () => {
    platform = await startPlatform();
    operator = adminClient(platform.baseUrl, platform.adminToken);
    await operator.putAccount(account);
    await putAdmin(operator, account, "ann", "admin", "ann-password-1");
    ann = adminClient(platform.baseUrl, await adminKey(platform.baseUrl, account, "ann", "ann-password-1"));
  });
  after(() => platform.close());
  beforeEach(() => {
    project = `p${++seq}`;
  });

  it("keeps every accepted revision with who stored it, when, and what changed", async () => {
    const created = await operator.send("PUT", path(), demoProject());
    expect(created.status).to.equal(201);
    expect(created.headers.get("etag")).to.match(/^"[^"]+"$/);
    expect(created.headers.get("etag")).to.equal((await ann.send("GET", path())).headers.get("etag"));
    const changed = await ann.send("PUT", path(), withSegment());
    expect(changed.status).to.equal(200);
    expect(changed.body).to.deep.equal({ name: project, revision: 2, summary: "tables ~1" });
    const refused = await ann.send("PUT", path(), { tables: 1 });
    expect(refused.status).to.equal(400);

    const list = await ann.send("GET", path("/revisions"));
    expect(list.status).to.equal(200);
    expect(list.body.map((r: { revision: number }) => r.revision)).to.deep.equal([1, 2]);
    expect(list.body[0].by).to.deep.equal({ kind: "operator" });
    expect(list.body[0].summary).to.equal("tables +2, apiVersions +1, roles +3, authentication changed");
    expect(list.body[1]).to.deep.include({
      by: { kind: "admin", login: "ann", role: "admin" },
      summary: "tables ~1",
    });
    expect(Date.parse(list.body[1].at)).to.be.closeTo(Date.now(), 60_000);

    const one = await ann.send("GET", path("/revisions/1"));
    expect(one.status).to.equal(200);
    expect(one.body.definition.tables.customer.columns).to.not.have.property("segment");
    expect((await ann.send("GET", path("/revisions/3"))).status).to.equal(404);
    expect((await ann.send("GET", path("/revisions/x"))).status).to.equal(404);
  });

  it("pages revisions with a next_batch element", async () => {
    await operator.send("PUT", path(), demoProject());
    for (let i = 0; i < 4; i++) await operator.send("PUT", path(), i % 2 ? demoProject() : withSegment());
    const seen: number[] = [];
    let url: string | undefined = `${platform.baseUrl}/admin/v1${path("/revisions")}?pagesize=2`;
    while (url) {
      const r: Reply = await call(platform.baseUrl, "GET", url.slice(platform.baseUrl.length), {
        headers: { authorization: `Bearer ${platform.adminToken}` },
      });
      expect(r.status).to.equal(200);
      url = r.body[r.body.length - 1]?.["@metadata"]?.next_batch;
      seen.push(
        ...r.body
          .filter((x: { revision?: number }) => x.revision)
          .map((x: { revision: number }) => x.revision),
      );
    }
    expect(seen).to.deep.equal([1, 2, 3, 4, 5]);
  });

  it("lists revisions newest first and filters them by who stored them, keeping both in next_batch", async () => {
    expect((await ann.send("PUT", path(), demoProject())).status).to.equal(201);
    expect((await operator.send("PUT", path(), withSegment())).status).to.equal(200);
    expect((await ann.send("PUT", path(), demoProject())).status).to.equal(200);
    expect((await ann.send("PUT", path(), withSegment())).status).to.equal(200);
    const readAll = async (first: string) => {
      const shown: { revision: number; by: { kind: string; login?: string } }[] = [];
      let next: string | undefined = first;
      while (next) {
        const r = await ann.send("GET", next);
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        const batch: string | undefined = r.body.at(-1)?.["@metadata"]?.next_batch;
        shown.push(...(batch ? r.body.slice(0, -1) : r.body));
        next = batch?.slice(`${platform.baseUrl}/admin/v1`.length);
      }
      return shown;
    };
    const newest = await readAll(path("/revisions?order=newest&pagesize=1"));
    expect(newest.map((r) => r.revision)).to.deep.equal([4, 3, 2, 1]);
    const anns = await readAll(path("/revisions?order=newest&by=admin:ann&pagesize=2"));
    expect(anns.map((r) => r.revision)).to.deep.equal([4, 3, 1]);
    const operators = await readAll(path("/revisions?by=operator"));
    expect(operators.map((r) => r.revision)).to.deep.equal([2]);
    expect((await readAll(path("/revisions?order=newest&since=2"))).map((r) => r.revision)).to.deep.equal([
      4, 3,
    ]);
    for (const query of ["order=desc", "by=someone", "before=0"]) {
      const r = await ann.send("GET", path(`/revisions?${query}`));
      expect(r.status, query).to.equal(400);
    }
  });

  it("a dry run answers the structured diff and applies nothing", async () => {
    const created = await operator.send("PUT", path(), demoProject());
    const dry = await ann.send("PUT", `${path()}?dryRun=true`, withSegment());
    expect(dry.status).to.equal(200);
    expect(dry.headers.get("etag")).to.equal(created.headers.get("etag"));
    expect(dry.body).to.deep.equal({
      summary: "tables ~1",
      tables: { changed: { customer: { columns: { added: ["segment"] } } } },
    });
    const same = await ann.send("PUT", `${path()}?dryRun=true`, demoProject());
    expect(same.body).to.deep.equal({ summary: "no changes" });
    const invalid = await ann.send("PUT", `${path()}?dryRun=true`, {
      tables: {},
      apiVersions: { v1: { resources: { X: { table: "nope" } } } },
    });
    expect(invalid.status).to.equal(400);
    expect(invalid.body.errorCode).to.equal(4001);
    expect(invalid.body.problems).to.be.an("array").that.is.not.empty;
    const current = await ann.send("GET", path());
    expect(current.body.revision).to.equal(1);
    expect(current.body.definition.tables.customer.columns).to.not.have.property("segment");
    expect((await ann.send("GET", path("/revisions"))).body).to.have.length(1);
    const audit = (await ann.send("GET", `/accounts/${account}/audit?pagesize=1000`)).body;
    expect(audit.filter((e: { path: string }) => e.path.endsWith(`/projects/${project}`))).to.have.length(1);
    expect((await ann.send("PUT", `${path()}?dryRun=maybe`, demoProject())).status).to.equal(400);
  });

  it("a dry run of a project that does not exist yet answers everything as added", async () => {
    const dry = await ann.send("PUT", `${path()}?dryRun=true`, demoProject());
    expect(dry.status).to.equal(200);
    expect(dry.body.summary).to.equal("tables +2, apiVersions +1, roles +3, authentication changed");
    expect((await ann.send("GET", path())).status).to.equal(404);
  });

  it("rolls back to an earlier revision as a new revision, and refuses a revision that does not exist", async () => {
    await operator.send("PUT", path(), demoProject());
    await ann.send("PUT", path(), withSegment());
    const rolled = await ann.send("POST", path("/rollback"), { revision: 1 });
    expect(rolled.status).to.equal(200);
    expect(rolled.headers.get("etag")).to.equal((await ann.send("GET", path())).headers.get("etag"));
    expect(rolled.body).to.deep.equal({
      name: project,
      revision: 3,
      summary: "rollback to revision 1: tables ~1",
    });
    const current = await ann.send("GET", path());
    expect(current.body.revision).to.equal(3);
    expect(current.body.definition).to.deep.equal(
      (await ann.send("GET", path("/revisions/1"))).body.definition,
    );
    const list = (await ann.send("GET", path("/revisions"))).body;
    expect(list[2]).to.deep.include({ revision: 3, summary: "rollback to revision 1: tables ~1" });
    for (const body of [{ revision: 9 }, { revision: 0 }, { revision: "1" }, {}]) {
      const r = await ann.send("POST", path("/rollback"), body);
      expect(r.status, JSON.stringify(body)).to.be.oneOf([400, 404]);
    }
    expect((await ann.send("GET", path())).body.revision).to.equal(3);
  });

  it("GET answers ETag; If-Match with a stale revision is 412/4121 and changes nothing", async () => {
    await operator.send("PUT", path(), demoProject());
    const got = await ann.send("GET", path());
    const etag = got.headers.get("etag")!;
    expect(etag).to.match(/^"[^"]+"$/);
    const changed = await putWith(withSegment(), { "if-match": etag });
    expect(changed.status).to.equal(200);
    const current = changed.headers.get("etag")!;
    expect(current).to.not.equal(etag);
    const stale = await putWith(demoProject(), { "if-match": etag });
    expect(stale.status).to.equal(412);
    expect(stale.body.errorCode).to.equal(4121);
    const staleRollback = await call(platform.baseUrl, "POST", `/admin/v1${path("/rollback")}`, {
      body: { revision: 1 },
      headers: { authorization: `Bearer ${platform.adminToken}`, "if-match": etag },
    });
    expect(staleRollback.status).to.equal(412);
    expect(
      (await putWith(demoProject(), { "if-match": `W/${current}` })).status,
      "weak tags never match",
    ).to.equal(412);
    expect((await putWith(demoProject(), { "if-match": "2" })).status, "malformed").to.equal(400);
    expect((await putWith(demoProject(), { "if-match": '"2"' })).status, "a bare revision").to.equal(412);
    expect((await ann.send("GET", path())).body.revision).to.equal(2);
    expect((await putWith(demoProject(), { "if-match": `"7", ${current}` })).status).to.equal(200);
    expect((await putWith(demoProject(), { "if-match": "*" })).status).to.equal(200);
    project = `${project}new`;
    expect((await putWith(demoProject(), { "if-match": "*" })).status, "* needs a project").to.equal(412);
  });

  it("of many concurrent PUTs with the same If-Match exactly one succeeds", async () => {
    await operator.send("PUT", path(), demoProject());
    for (let round = 0; round < 3; round++) {
      const etag = (await ann.send("GET", path())).headers.get("etag")!;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          putWith(i % 2 ? demoProject() : withSegment(), { "if-match": etag }),
        ),
      );
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses, `round ${round}`).to.deep.equal([200, 412, 412, 412, 412, 412, 412, 412]);
      const revisions = (await ann.send("GET", path("/revisions?pagesize=1000"))).body;
      expect(revisions.map((r: { revision: number }) => r.revision)).to.deep.equal(
        Array.from({ length: round + 2 }, (_, i) => i + 1),
      );
    }
  });

  it("concurrent PUTs without If-Match all land, each as its own revision", async () => {
    await operator.send("PUT", path(), demoProject());
    const answers = await Promise.all(Array.from({ length: 6 }, () => putWith(withSegment(), {})));
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
    expect(answers.map((r) => r.body.revision).sort()).to.deep.equal([2, 3, 4, 5, 6, 7]);
    const revisions = (await ann.send("GET", path("/revisions"))).body;
    expect(revisions.map((r: { revision: number }) => r.revision)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
  });

  it("a deleted and re-created project starts a new history", async () => {
    await operator.send("PUT", path(), demoProject());
    await operator.send("PUT", path(), withSegment());
    expect((await ann.send("DELETE", path())).status).to.equal(200);
    expect((await ann.send("GET", path("/revisions"))).status).to.equal(404);
    await ann.send("PUT", path(), demoProject());
    const list = (await ann.send("GET", path("/revisions"))).body;
    expect(list.map((r: { revision: number }) => r.revision)).to.deep.equal([1]);
  });
});
