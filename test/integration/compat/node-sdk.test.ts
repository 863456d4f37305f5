/**
 * The original product's Node SDK (npm caliveapicreator 1.3.x), unchanged, in a
 * process of its own (sdk-worker.ts), used as its README shows: connect with the
 * project URL and a user name and password (or an API key), then
 * endpoint(...).get/post/put/del, following `@metadata.href` for updates and
 * deletes. See docs/compatibility.md.
 */
import http from "node:http";
import { expect } from "chai";
import { type CompatPlatform, PASSWORD, startCompatPlatform, USER } from "./compat-platform.ts";
import { type Connection, rejection, SdkProcess } from "./sdk-process.ts";

/** A login POST with exactly the headers given (fetch would add a Content-Type of its own). */
function rawLogin(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: { apikey?: string; errorCode?: number } }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/@authentication`, { method: "POST", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("compat: caliveapicreator (Node SDK) unchanged against Tessera", () => {
  let c: CompatPlatform;
  let apicreator: SdkProcess;
  let api: Connection;

  before(async () => {
    c = await startCompatPlatform();
    apicreator = new SdkProcess();
    api = await apicreator.connect(c.projectUrl, USER, PASSWORD);
  });
  after(async () => {
    apicreator?.close();
    await c?.platform.close();
  });

  describe("connect", () => {
    it("logs in with user name and password (the SDK posts the body without a Content-Type)", async () => {
      expect(api.apiKey).to.be.a("string").and.match(/^tsk_/);
      expect((await c.api.get(api.apiKey ?? undefined, "customer")).status).to.equal(200);
      const keys = await c.admin.listKeys("acme", "demo");
      const names = keys.body.map((k: { name: string }) => k.name);
      expect(names).to.include(`Temp key for demo [${USER}]`);
    });

    it("only the login accepts an untyped body, and not from a browser (Origin) or with a non-JSON type", async () => {
      const body = JSON.stringify({ username: USER, password: PASSWORD });
      const untyped = await rawLogin(c.projectUrl, {}, body);
      expect(untyped.status).to.equal(200);
      expect(untyped.body.apikey).to.be.a("string");

      const fromPage = await rawLogin(c.projectUrl, { origin: "https://elsewhere.example" }, body);
      expect(fromPage.status).to.equal(415);
      expect(fromPage.body.errorCode).to.equal(4151);

      const text = await rawLogin(c.projectUrl, { "content-type": "text/plain" }, body);
      expect(text.status).to.equal(415);

      const untypedData = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          `${c.projectUrl}/customer`,
          { method: "POST", headers: { authorization: `Tessera ${c.checkKey}:1` } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify({ name: "Untyped" }));
      });
      expect(untypedData).to.equal(415);
    });

    it("connects with an API key: a manual key's role and row filter apply", async () => {
      await c.api.post(c.checkKey, "customer", [
        { name: "West One", region: "west" },
        { name: "East One", region: "east" },
      ]);
      const created = await c.admin.createKey("acme", "demo", {
        name: "west reader",
        roles: ["Region reader"],
        globals: { region: "west" },
      });
      const reader = await apicreator.connect(c.projectUrl, created.body.apikey);
      const rows = await reader.endpoint("customer").get();
      expect(rows.map((r) => r.name)).to.deep.equal(["West One"]);
      expect(rows[0]).to.not.have.property("credit_limit");
      const denied = await rejection(reader.endpoint("customer").post({ name: "Nope" }));
      expect(denied).to.include({ statusCode: 403, errorCode: 4031 });
      expect(denied.errorMessage).to.be.a("string");
    });

    it("a failed login leaves the SDK without a key; its calls reject with the 401 body", async () => {
      const wrong = await apicreator.connect(c.projectUrl, USER, "wrong-password");
      expect(wrong.apiKey).to.equal(null);
      const e = await rejection(wrong.endpoint("customer").get());
      expect(e.statusCode).to.equal(401);
      expect(e.errorMessage).to.be.a("string");
    });
  });

  describe("data, the README way", () => {
    const customers = () => api.endpoint("customer");

    it("post inserts one object or an array; query parameters pass through", async () => {
      const one = await customers().post({ name: "Alpha", credit_limit: 1234 });
      expect(one.statusCode).to.equal(201);
      expect(one.txsummary[0]).to.include({ name: "Alpha", credit_limit: 1234 });
      expect(one.txsummary[0]!["@metadata"]).to.include({ verb: "INSERT", resource: "customer" });

      const many = await customers().post([{ name: "Beta Co" }, { name: "O'Brien" }], { rulesummary: true });
      expect(many.txsummary.map((r) => r.name)).to.deep.equal(["Beta Co", "O'Brien"]);
      expect(many).to.have.property("rulesummary");

      const dup = await rejection(customers().post({ name: "Alpha" }));
      expect(dup).to.include({ statusCode: 400, errorCode: 4003 });
    });

    it("get lists, filters, reads by key, and follows next_batch", async () => {
      const all = await customers().get();
      expect(all.map((r) => r.name)).to.include.members(["Alpha", "Beta Co", "O'Brien"]);

      const filtered = await customers().get({ sysfilter: "equal(name:'Beta Co')" });
      expect(filtered.map((r) => r.name)).to.deep.equal(["Beta Co"]);
      // A string is used as the query as given (the SDK only escapes its first space).
      const byText = await customers().get(`filter=${encodeURIComponent("name like 'O%'")}&order=name`);
      expect(byText.map((r) => r.name)).to.deep.equal(["O'Brien"]);

      const byKey = await api.endpoint("customer/Beta%20Co").get();
      expect(byKey).to.have.length(1);
      expect(byKey[0]!["@metadata"].href).to.equal(`${c.projectUrl}/customer/Beta%20Co`);

      const page = await customers().get({ pagesize: 2, order: "name" });
      expect(page).to.have.length(3);
      const next = page[2]!["@metadata"].next_batch!;
      expect(next).to.be.a("string");
      const rest = await api.endpoint(next).get();
      const names = [...page.slice(0, 2), ...rest.filter((r) => !r["@metadata"].next_batch)].map(
        (r) => r.name,
      );
      expect(names.slice(0, 3)).to.deep.equal(["Alpha", "Beta Co", "East One"]);
    });

    it("put sends the object back to its @metadata.href; a stale checksum rejects with 409", async () => {
      const [alpha] = await customers().get({ sysfilter: "equal(name:'Alpha')" });
      const endpoint = api.endpoint(alpha!["@metadata"].href);
      alpha!.credit_limit = 5000;
      const put = await endpoint.put(alpha);
      expect(put.statusCode).to.equal(200);
      expect(put.txsummary[0]).to.include({ name: "Alpha", credit_limit: 5000 });
      expect(put.txsummary[0]!["@metadata"].verb).to.equal("UPDATE");

      const stale = await rejection(endpoint.put(alpha));
      expect(stale).to.include({ statusCode: 409, errorCode: 4091 });

      const stored = (await c.api.get(c.checkKey, "customer/Alpha")).body[0];
      expect(stored.credit_limit).to.equal(5000);
    });

    it("put of a custom resource object with its nested sub-resource", async () => {
      await api.endpoint("purchaseorder").post({ customer_name: "Beta Co", amount_total: 10 });
      const [beta] = await api.endpoint("Customers").get({ sysfilter: "equal(Name:'Beta Co')" });
      expect(beta!.Orders).to.have.length(1);
      beta!.Region = "north";
      const put = await api.endpoint(beta!["@metadata"].href).put(beta);
      expect(put.txsummary[0]).to.include({ Name: "Beta Co", Region: "north" });
      expect(put.txsummary[0]!["@metadata"]).to.include({ resource: "Customers", verb: "UPDATE" });
      expect((await c.api.get(c.checkKey, "customer/Beta%20Co")).body[0].region).to.equal("north");
    });

    it("del sends the object's checksum; a missing object rejects with 404", async () => {
      const [obrien] = await api.endpoint("customer/O'Brien").get();
      const endpoint = api.endpoint(obrien!["@metadata"].href);
      const del = await endpoint.del(obrien!);
      expect(del.statusCode).to.equal(200);
      expect(del.txsummary[0]!["@metadata"]).to.deep.equal({
        href: `${c.projectUrl}/customer/O'Brien`,
        resource: "customer",
        verb: "DELETE",
      });
      expect((await c.api.get(c.checkKey, "customer/O'Brien")).body).to.deep.equal([]);

      const again = await rejection(endpoint.del(obrien!));
      expect(again).to.include({ statusCode: 404 });
      expect(again.errorMessage).to.contain("No such object");
    });

    it("reads the meta endpoints its samples use (@tables, @tables/<name>, @resources)", async () => {
      const tables = await api.endpoint("@tables").get();
      expect(tables.map((t) => t.name)).to.deep.equal(["customer", "purchaseorder"]);
      const one = (await api.endpoint("@tables/customer").get()) as unknown as {
        columns: { name: string }[];
      };
      expect(one.columns.map((col) => col.name)).to.deep.equal(["name", "balance", "credit_limit", "region"]);
      const resources = await api.endpoint("@resources").get();
      expect(resources.map((r) => r.name)).to.deep.equal(["Customers", "Customers.Orders"]);
    });

    it("reads @docs (sending its X-liveapicreatorLogic-ResponseFormat: json) as an OpenAPI 3.1 document", async () => {
      const doc = (await api.endpoint("@docs").get()) as unknown as {
        openapi: string;
        servers: { url: string }[];
        paths: Record<string, unknown>;
      };
      expect(doc.openapi).to.equal("3.1.0");
      expect(doc.servers).to.deep.equal([{ url: c.projectUrl }]);
      expect(doc.paths).to.include.keys("/customer", "/customer/{key}", "/Customers", "/@authentication");
    });
  });
});
