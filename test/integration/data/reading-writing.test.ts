/**
 * Data API reading and writing (docs/data-api.md): row filters and column lists, paging
 * with next_batch, sysfilter/sysorder, nometa, links, nested resources, per-object
 * actions, cascade insert, DELETE variants, hostile input, concurrent updates.
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("data API", () => {
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let demo: ReturnType<typeof projectClient>;
  let full: string;
  let westReader: string;

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    const def = demoProject();
    (def.roles as any)["Own orders"] = {
      tables: {
        purchaseorder: {
          access: ["read", "update", "delete"],
          rowFilter: "customer_name = @{_apikey.user_identifier}",
        },
      },
    };
    await admin.putProject("acme", "demo", def);
    demo = projectClient(platform.baseUrl, "acme", "demo");
    full = (await admin.createKey("acme", "demo", { name: "full", roles: ["Full access"] })).body.apikey;
    westReader = (
      await admin.createKey("acme", "demo", {
        name: "west",
        roles: ["Region reader"],
        globals: { region: "west" },
      })
    ).body.apikey;
    const customers = [];
    for (let i = 0; i < 45; i++) {
      customers.push({
        name: `cust-${String(i).padStart(2, "0")}`,
        region: i % 3 === 0 ? "west" : "east",
        credit_limit: i * 10,
      });
    }
    expect((await demo.post(full, "customer", customers)).status).to.equal(201);
  });
  after(() => platform.close());

  describe("row-level security and columns", () => {
    it("a row filter with a bound global limits reads", async () => {
      const r = await demo.get(westReader, "customer?pagesize=100");
      expect(r.status).to.equal(200);
      expect(r.body).to.have.length(15);
      expect(r.body.every((c: { region: string }) => c.region === "west")).to.equal(true);
    });
    it("columns outside the role's list are not returned", async () => {
      const r = await demo.get(westReader, "customer/cust-00");
      expect(Object.keys(r.body[0]).sort()).to.deep.equal(["@metadata", "balance", "name", "region"]);
    });
    it("a hidden row is not found by key, and a filter cannot reach round the row filter", async () => {
      expect((await demo.get(westReader, "customer/cust-01")).body).to.deep.equal([]);
      const r = await demo.get(
        westReader,
        `customer?filter=${encodeURIComponent("region = 'east' or name = 'cust-01'")}`,
      );
      expect(r.body).to.deep.equal([]);
    });
    it("a filter on a hidden column is refused as unknown", async () => {
      const r = await demo.get(westReader, `customer?filter=${encodeURIComponent("credit_limit > 0")}`);
      expect(r.status).to.equal(400);
      expect(r.body.errorCode).to.equal(4002);
    });
    it("a missing required global → 403 with a clear message", async () => {
      const noGlobal = (await admin.createKey("acme", "demo", { name: "noglobal", roles: ["Region reader"] }))
        .body.apikey;
      const r = await demo.get(noGlobal, "customer");
      expect(r.status).to.equal(403);
      expect(r.body.errorMessage).to.contain("region");
    });
    it("a key cannot update or delete a row its row filter hides", async () => {
      const orders = await demo.post(full, "purchaseorder", [
        { customer_name: "cust-03", amount_total: 1 },
        { customer_name: "cust-04", amount_total: 2 },
      ]);
      const [mine, theirs] = orders.body.txsummary.map((o: { order_number: number }) => o.order_number);
      const own = (
        await admin.createKey("acme", "demo", {
          name: "own",
          roles: ["Own orders"],
          userIdentifier: "cust-03",
        })
      ).body.apikey;
      expect(
        (await demo.put(own, `purchaseorder/${mine}`, { "@metadata": { checksum: "override" }, notes: "ok" }))
          .status,
      ).to.equal(200);
      const upd = await demo.put(own, `purchaseorder/${theirs}`, {
        "@metadata": { checksum: "override" },
        notes: "hijack",
      });
      expect(upd.status).to.equal(404);
      const del = await demo.delete(own, `purchaseorder/${theirs}?checksum=override`);
      expect(del.status).to.equal(404);
      expect((await demo.get(full, `purchaseorder/${theirs}`)).body[0].notes).to.equal(null);
    });
  });

  describe("paging", () => {
    it("defaults to 20 rows and ends the page with a next_batch element", async () => {
      const r = await demo.get(full, "customer");
      expect(r.body).to.have.length(21);
      const last = r.body[20];
      expect(Object.keys(last)).to.deep.equal(["@metadata"]);
      expect(last["@metadata"].next_batch).to.match(
        /^http:\/\/127\.0\.0\.1:\d+\/rest\/acme\/demo\/v1\/customer\?/,
      );
    });
    it("following next_batch visits every row once, in key order", async () => {
      const seen: string[] = [];
      let url: string | undefined = `${platform.baseUrl}${demo.root}/customer?pagesize=7`;
      while (url) {
        const r = await call(platform.baseUrl, "GET", url.slice(platform.baseUrl.length), {
          headers: keyHeader(full),
        });
        const rows = r.body as Record<string, any>[];
        const tail = rows[rows.length - 1]?.["@metadata"]?.next_batch as string | undefined;
        seen.push(...rows.filter((x) => !x["@metadata"]?.next_batch).map((x) => x.name));
        url = tail;
      }
      expect(seen).to.have.length(45);
      expect(seen).to.deep.equal([...seen].sort());
    });
    it("keeps filters and order in next_batch, and pages by offset for non-key orders", async () => {
      const first = await demo.get(
        full,
        `customer?pagesize=5&order=${encodeURIComponent("credit_limit desc")}&filter=${encodeURIComponent("region = 'east'")}`,
      );
      const next = first.body[5]["@metadata"].next_batch as string;
      expect(next).to.contain("offset=5").and.contain("filter=").and.contain("order=");
      const second = await call(platform.baseUrl, "GET", next.slice(platform.baseUrl.length), {
        headers: keyHeader(full),
      });
      const limits = [...first.body.slice(0, 5), ...second.body.slice(0, 5)].map(
        (c: { credit_limit: number }) => c.credit_limit,
      );
      expect(limits).to.deep.equal([...limits].sort((a, b) => b - a));
      expect(new Set(limits).size).to.equal(10);
    });
    it("pages an order on a required column by a keyset: every row once, ties in key order", async () => {
      const owners = ["cust-10", "cust-11", "cust-12"];
      const made = await demo.post(
        full,
        "purchaseorder",
        Array.from({ length: 11 }, (_, i) => ({ customer_name: owners[i % 3], amount_total: i })),
      );
      expect(made.status).to.equal(201);
      const query = `order=${encodeURIComponent("customer_name desc")}&filter=${encodeURIComponent(
        "customer_name in ('cust-10', 'cust-11', 'cust-12')",
      )}`;
      const all = (await demo.get(full, `purchaseorder?pagesize=100&${query}`)).body as {
        order_number: number;
        customer_name: string;
      }[];
      expect(all).to.have.length(11);
      const seen: number[] = [];
      let url: string | undefined = `${platform.baseUrl}${demo.root}/purchaseorder?pagesize=4&${query}`;
      while (url) {
        const r = await call(platform.baseUrl, "GET", url.slice(platform.baseUrl.length), {
          headers: keyHeader(full),
        });
        const rows = r.body as Record<string, any>[];
        const tail = rows[rows.length - 1]?.["@metadata"]?.next_batch as string | undefined;
        if (tail) expect(tail).to.contain("pagekey=");
        seen.push(...rows.filter((x) => !x["@metadata"]?.next_batch).map((x) => x.order_number));
        url = tail;
      }
      expect(seen).to.deep.equal(all.map((o) => o.order_number));
      const expected = [...all].sort((a, b) =>
        a.customer_name === b.customer_name
          ? a.order_number - b.order_number
          : b.customer_name.localeCompare(a.customer_name),
      );
      expect(all).to.deep.equal(expected);
    });
    it("pagesize outside 1..5000 and malformed offsets are 400/4001", async () => {
      for (const q of [
        "pagesize=0",
        "pagesize=5001",
        "pagesize=abc",
        "offset=-1",
        "pagesize=1&pagesize=2",
        "pagekey=%7B%7D",
      ]) {
        const r = await demo.get(full, `customer?${q}`);
        expect(r.status, q).to.equal(400);
        expect(r.body.errorCode, q).to.equal(4001);
      }
    });
    it("nometa=true drops @metadata; rows carry links to child collections", async () => {
      const plain = await demo.get(full, "customer/cust-00?nometa=true");
      expect(plain.body[0]).to.not.have.property("@metadata");
      const withMeta = await demo.get(full, "customer/cust-00");
      expect(withMeta.body[0]["@metadata"].links).to.deep.equal([
        {
          rel: "children",
          role: "orders",
          href: `${platform.baseUrl}${demo.root}/purchaseorder?filter=${encodeURIComponent("customer_name = 'cust-00'")}`,
        },
      ]);
    });
  });

  describe("filter forms", () => {
    it("sysfilter and sysorder (LAC forms) and repeated parameters AND together", async () => {
      const r = await demo.get(
        full,
        `customer?sysfilter=${encodeURIComponent("greater(credit_limit: 100)")}&sysfilter=${encodeURIComponent("equal(region: 'west')")}&sysorder=${encodeURIComponent("(credit_limit:desc)")}&pagesize=100`,
      );
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const limits = r.body.map((c: { credit_limit: number }) => c.credit_limit);
      expect(limits).to.deep.equal([420, 390, 360, 330, 300, 270, 240, 210, 180, 150, 120]);
    });
    it("like is anchored and treats regex metacharacters literally", async () => {
      await demo.post(full, "customer", { name: "a.*b(c", region: "x" });
      const literal = await demo.get(full, `customer?filter=${encodeURIComponent("name like 'a.*b(%'")}`);
      expect(literal.body.map((c: { name: string }) => c.name)).to.deep.equal(["a.*b(c"]);
      const none = await demo.get(full, `customer?filter=${encodeURIComponent("name like '.*'")}`);
      expect(none.body).to.deep.equal([]);
    });
  });

  describe("custom resources", () => {
    it("aliases attributes and nests children; dotted names address sub-resources", async () => {
      await demo.post(full, "purchaseorder", { customer_name: "cust-06", amount_total: 9 });
      const r = await demo.get(full, "Customers/cust-06");
      expect(r.body[0]).to.include({ Name: "cust-06", Region: "west" });
      expect(r.body[0]).to.not.have.property("name");
      expect(r.body[0].Orders).to.have.length(1);
      expect(r.body[0].Orders[0]["@metadata"].href).to.contain("/Customers.Orders/");
      const dotted = await demo.get(full, "Customers.Orders");
      expect(dotted.status).to.equal(200);
    });
    it("writes through aliases; unknown aliases are 4003", async () => {
      const ok = await demo.post(full, "Customers", { Name: "Aliased", Region: "north" });
      expect(ok.status).to.equal(201);
      expect(ok.body.txsummary[0]["@metadata"].resource).to.equal("Customers");
      expect(ok.body.txsummary[0]).to.include({ Name: "Aliased" });
      const bad = await demo.post(full, "Customers", { name: "lowercase is the column, not the alias" });
      expect(bad.body.errorCode).to.equal(4003);
    });
  });

  describe("actions and nested writes", () => {
    it("nested POST stamps the parent key into the children, in one transaction", async () => {
      const r = await demo.post(full, "customer", {
        name: "Nest",
        orders: [{ amount_total: 1 }, { amount_total: 2 }],
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body.txsummary).to.have.length(3);
      expect(r.body.txsummary.slice(1).map((o: { customer_name: string }) => o.customer_name)).to.deep.equal([
        "Nest",
        "Nest",
      ]);
      const failed = await demo.post(full, "customer", {
        name: "Nest2",
        orders: [{ amount_total: 1 }, { amount_total: "x" }],
      });
      expect(failed.status).to.equal(400);
      expect((await demo.get(full, "customer/Nest2")).body).to.deep.equal([]);
    });
    it("mixes INSERT, UPDATE, DELETE and MERGE_INSERT in one request", async () => {
      const seed = await demo.post(full, "customer", [{ name: "M1" }, { name: "M2" }]);
      const m1 = seed.body.txsummary[0]["@metadata"].checksum;
      const r = await demo.put(full, "customer", [
        { "@metadata": { action: "INSERT" }, name: "M3" },
        { "@metadata": { action: "UPDATE", checksum: m1 }, name: "M1", credit_limit: 11 },
        { "@metadata": { action: "DELETE", checksum: "override" }, name: "M2" },
        { "@metadata": { action: "MERGE_INSERT", key: "name" }, name: "M1", region: "merged" },
        { "@metadata": { action: "MERGE_INSERT", key: ["name"] }, name: "M4", region: "new" },
      ]);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const verbs = r.body.txsummary.map((o: any) => `${o.name}:${o["@metadata"].verb}`);
      expect(verbs).to.deep.equal(["M3:INSERT", "M1:UPDATE", "M2:DELETE", "M4:INSERT"]);
      const m1After = (await demo.get(full, "customer/M1")).body[0];
      expect(m1After).to.include({ credit_limit: 11, region: "merged" });
    });
    it("LOOKUP resolves a parent by @metadata.key and stamps its key into the child", async () => {
      const r = await demo.post(full, "purchaseorder", {
        amount_total: 4,
        customer: { "@metadata": { action: "LOOKUP", key: "name" }, name: "cust-07" },
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      expect(r.body.txsummary[0].customer_name).to.equal("cust-07");
      const miss = await demo.post(full, "purchaseorder", {
        customer: { "@metadata": { action: "LOOKUP", key: "name" }, name: "nobody" },
      });
      expect(miss.status).to.equal(400);
      expect(miss.body.errorCode).to.equal(4003);
    });
    it("one bad object rolls back the whole request", async () => {
      const r = await demo.post(full, "customer", [
        { name: "Good1" },
        { name: "Good2" },
        { name: "Bad", credit_limit: "x" },
      ]);
      expect(r.status).to.equal(400);
      expect(
        (await demo.get(full, `customer?filter=${encodeURIComponent("name like 'Good%'")}`)).body,
      ).to.deep.equal([]);
    });
    it("inserting a stored key is 400/4003 'already exists' for the resource written, and nothing is written", async () => {
      const before = (await demo.get(full, "customer/cust-01")).body[0];
      const r = await demo.post(full, "customer", [
        { name: "Dup-new" },
        { name: "cust-01", credit_limit: 99 },
      ]);
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body).to.include({
        errorCode: 4003,
        errorMessage: "An object with key cust-01 already exists in 'customer'",
      });
      expect((await demo.get(full, "customer/Dup-new")).body).to.deep.equal([]);
      expect((await demo.get(full, "customer/cust-01")).body[0]).to.deep.equal(before);
      const aliased = await demo.post(full, "Customers", { Name: "cust-02" });
      expect(aliased.body).to.include({
        statusCode: 400,
        errorMessage: "An object with key cust-02 already exists in 'Customers'",
      });
      const twice = await demo.post(full, "customer", [{ name: "Twice" }, { name: "Twice" }]);
      expect(twice.body).to.include({
        statusCode: 400,
        errorMessage: "An object with key Twice already exists in 'customer'",
      });
      expect((await demo.get(full, "customer/Twice")).body).to.deep.equal([]);
    });
    it("a nested child whose key is stored already undoes its new parent", async () => {
      const order = (await demo.post(full, "purchaseorder", { customer_name: "cust-03" })).body.txsummary[0];
      const r = await demo.post(full, "customer", {
        name: "Parent-of-dup",
        orders: [{ order_number: order.order_number, amount_total: 5 }],
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.errorMessage).to.equal(
        `An object with key ${order.order_number} already exists in 'purchaseorder'`,
      );
      expect((await demo.get(full, "customer/Parent-of-dup")).body).to.deep.equal([]);
      expect((await demo.get(full, `purchaseorder/${order.order_number}`)).body[0]).to.include({
        customer_name: "cust-03",
      });
    });
    it("a child needs an existing parent, and a parent with children cannot be deleted", async () => {
      const orphan = await demo.post(full, "purchaseorder", { customer_name: "ghost" });
      expect(orphan.status).to.equal(400);
      expect(orphan.body.errorMessage).to.contain("customer");
      const del = await demo.delete(full, "customer/cust-06?checksum=override");
      expect(del.status).to.equal(400);
    });
    it("DELETE: missing checksum 4001, missing object 404, ignoredeleted 200 with an empty txsummary", async () => {
      expect((await demo.delete(full, "customer/cust-10")).body.errorCode).to.equal(4001);
      const missing = await demo.delete(full, "customer/none-such?checksum=override");
      expect(missing.status).to.equal(404);
      const ignored = await demo.delete(full, "customer/none-such?checksum=override&ignoredeleted=true");
      expect(ignored.status).to.equal(200);
      expect(ignored.body.txsummary).to.deep.equal([]);
    });
    it("txsummary=false suppresses the summary", async () => {
      const r = await demo.post(full, "customer?txsummary=false", { name: "Quiet" });
      expect(r.status).to.equal(201);
      expect(r.body).to.deep.equal({ statusCode: 201 });
    });
  });

  describe("hostile input", () => {
    it("operator injection in filters is a parse error or a literal, never an operator", async () => {
      for (const filter of [
        "$where = 1",
        'name = {"$gt": ""}',
        "name = '$gt'",
        "name = 1; drop",
        "name = '' or 1=1",
      ]) {
        const r = await demo.get(full, `customer?filter=${encodeURIComponent(filter)}`);
        expect([200, 400], filter).to.include(r.status);
        if (r.status === 200) expect(r.body).to.deep.equal([]);
        else expect(r.body.errorCode).to.equal(4002);
      }
    });
    it("very long filters, deep nesting and malformed percent-encoding are clear 400s", async () => {
      const long = await demo.get(
        full,
        `customer?filter=${encodeURIComponent(`name = '${"x".repeat(10_000)}'`)}`,
      );
      expect(long.status).to.equal(400);
      expect(long.body.errorCode).to.equal(4002);
      // Longer than any request line the edge reads: the edge answers, in the same shape.
      const tooLong = await demo.get(full, `customer?filter=${"x".repeat(20_000)}`);
      expect(tooLong.status).to.equal(414);
      expect(tooLong.body).to.include({ statusCode: 414, errorCode: 4141 });
      const deep = await demo.get(
        full,
        `customer?filter=${encodeURIComponent(`${"(".repeat(500)}name = 'a'${")".repeat(500)}`)}`,
      );
      expect(deep.status).to.equal(400);
      const bad = await call(platform.baseUrl, "GET", `${demo.root}/customer?filter=%E0%A4%A`, {
        headers: keyHeader(full),
      });
      expect(bad.status).to.equal(400);
      expect(bad.body.errorCode).to.equal(4001);
    });
    it("keys with slashes and spaces round-trip", async () => {
      const name = "a/b c";
      const r = await demo.post(full, "customer", { name });
      expect(r.status).to.equal(201);
      const href = r.body.txsummary[0]["@metadata"].href as string;
      expect(href.endsWith("/customer/a%2Fb%20c")).to.equal(true);
      const got = await demo.get(full, "customer/a%2Fb%20c");
      expect(got.body[0].name).to.equal(name);
    });
    it("a huge body is 413, and non-object items are 4001", async () => {
      const big = await demo.post(full, "customer", { name: "x".repeat(5 * 1024 * 1024) });
      expect(big.status).to.equal(413);
      expect(big.body.errorCode).to.equal(4131);
      const items = await demo.post(full, "customer", [1, "two"]);
      expect(items.status).to.equal(400);
      expect(items.body.errorCode).to.equal(4001);
    });
  });

  describe("meta endpoints", () => {
    it("@heartbeat and @license need no key; @tables and @resources do", async () => {
      expect((await demo.get(undefined, "@heartbeat")).status).to.equal(200);
      const lic = await demo.get(undefined, "@license");
      expect(lic.body).to.include.keys("company", "license_type", "license_expiration");
      expect((await demo.get(undefined, "@tables")).status).to.equal(401);
      const tables = await demo.get(full, "@tables");
      expect(tables.body.map((t: { name: string }) => t.name)).to.deep.equal(["customer", "purchaseorder"]);
      const one = await demo.get(full, "@tables/customer");
      expect(one.body.primaryKey.columns).to.deep.equal(["name"]);
      const resources = await demo.get(full, "@resources");
      expect(resources.body.map((r: { name: string }) => r.name)).to.deep.equal([
        "Customers",
        "Customers.Orders",
      ]);
    });
  });

  describe("meta endpoints show what the key's roles reach", () => {
    it("@tables lists only the tables a role grants access to; @tables/<name> only its columns", async () => {
      const tables = await demo.get(westReader, "@tables");
      expect(tables.status).to.equal(200);
      expect(tables.body.map((t: { name: string }) => t.name)).to.deep.equal(["customer"]);

      const customer = await demo.get(westReader, "@tables/customer");
      expect(customer.status).to.equal(200);
      expect(customer.body.columns.map((c: { name: string }) => c.name)).to.deep.equal([
        "name",
        "balance",
        "region",
      ]);
      // Its orders are not the key's to see: no child link to them either.
      expect(customer.body.children).to.deep.equal([]);

      const orders = await demo.get(westReader, "@tables/purchaseorder");
      expect(orders.status).to.equal(403);
      expect(orders.body.errorCode).to.equal(4031);

      const fullView = await demo.get(full, "@tables/customer");
      expect(fullView.body.columns.map((c: { name: string }) => c.name)).to.include("credit_limit");
      expect(fullView.body.children.map((c: { child_table: string }) => c.child_table)).to.deep.equal([
        "purchaseorder",
      ]);
    });
  });

  describe("optimistic locking under concurrency", () => {
    it("concurrent PUTs with the same checksum: exactly one succeeds, the rest 409", async () => {
      const checksum = (await demo.get(full, "customer/cust-12")).body[0]["@metadata"].checksum;
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          demo.put(full, "customer/cust-12", { "@metadata": { checksum }, credit_limit: 1000 + i }),
        ),
      );
      const statuses = replies.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 200)).to.have.length(1);
      expect(statuses.filter((s) => s === 409)).to.have.length(9);
      const winner = replies.find((r) => r.status === 200)!.body.txsummary[0].credit_limit;
      expect((await demo.get(full, "customer/cust-12")).body[0].credit_limit).to.equal(winner);
    });
  });
});
