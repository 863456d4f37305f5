/**
 * The operator's list of accounts (GET /admin/v1/accounts): name order, paged with
 * next_batch like the other admin listings; a deleted account leaves it; a bad
 * cursor is 400/4001. Who may call it is in the access matrix (the operator only).
 */
import { expect } from "chai";
import { adminClient, call } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("the list of accounts", () => {
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  const list = (query: string) =>
    call(platform.baseUrl, "GET", `/admin/v1/accounts${query}`, {
      headers: { Authorization: `Bearer ${platform.adminToken}` },
    });

  before(async () => {
    platform = await startPlatform();
    operator = adminClient(platform.baseUrl, platform.adminToken);
    for (const name of ["delta", "alpha", "echo", "charlie", "bravo"]) {
      expect((await operator.putAccount(name)).status).to.equal(201);
    }
    await call(platform.baseUrl, "PUT", "/admin/v1/accounts/alpha", {
      headers: { Authorization: `Bearer ${platform.adminToken}` },
      body: { displayName: "Alpha Inc." },
    });
  });
  after(() => platform.close());

  it("pages through every account in name order", async () => {
    const names: string[] = [];
    let next: string | undefined = `${platform.baseUrl}/admin/v1/accounts?pagesize=2`;
    let pages = 0;
    while (next) {
      const url = new URL(next);
      const r = await list(url.search);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const rows = r.body as { name?: string; "@metadata"?: { next_batch: string } }[];
      next = rows.find((x) => x["@metadata"])?.["@metadata"]?.next_batch;
      names.push(...rows.filter((x) => x.name).map((x) => x.name!));
      pages++;
    }
    expect(names).to.deep.equal(["alpha", "bravo", "charlie", "delta", "echo"]);
    expect(pages).to.equal(3);
    const first = (await list("?pagesize=1")).body[0];
    expect(first).to.include({ name: "alpha", displayName: "Alpha Inc." });
    expect(first.created).to.match(/^\d{4}-\d{2}-\d{2}T/);
  });

  it("a deleted account leaves the list; a cursor that is no name is 400/4001", async () => {
    expect(
      (
        await call(platform.baseUrl, "DELETE", "/admin/v1/accounts/charlie", {
          headers: { Authorization: `Bearer ${platform.adminToken}` },
        })
      ).status,
    ).to.equal(200);
    const r = await list("?since=bravo");
    expect(r.body.map((x: { name: string }) => x.name)).to.deep.equal(["delta", "echo"]);
    const bad = await list(`?since=${encodeURIComponent('{"$gt":""}')}`);
    expect(bad.status).to.equal(400);
    expect(bad.body.errorCode).to.equal(4001);
  });
});
