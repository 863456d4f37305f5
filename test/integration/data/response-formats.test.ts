/**
 * CSV, XML and "JSON Object" answers of the data API, through the edge
 * against the real stores, read back with strict parsers: format negotiation
 * (URL parameter, the original product's headers, the version's default),
 * hostile values and names, nested resources, paging, column security, the
 * version's XML root element, errors that stay JSON and writes that refuse them.
 */
import { expect } from "chai";
import { parse } from "csv-parse/sync";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { child, childrenNamed, decodeXmlName, parseXml, type XmlElement } from "../../support/xml.ts";

/** Records as arrays of cell texts (strict RFC 4180, CRLF records). */
function readCsv(text: string): string[][] {
  return parse(text, { record_delimiter: "\r\n" }) as string[][];
}

/** Records as objects by header. */
function csvObjects(text: string): Record<string, string>[] {
  return parse(text, { record_delimiter: "\r\n", columns: true }) as Record<string, string>[];
}

const HOSTILE = {
  name: '=HYPERLINK("http://evil.example","click")',
  region: 'a,"b"\r\nc & <d> ]]>',
  credit_limit: -5,
};

function formatsProject() {
  const def = demoProject();
  (def.tables.customer.columns as Record<string, unknown>).profile = { type: "json" };
  (def.apiVersions.v1.resources as Record<string, unknown>).Orders = {
    table: "purchaseorder",
    attributes: { Number: "order_number", Amount: "amount_total", CustomerName: "customer_name" },
    subresources: {
      Customer: { table: "customer", via: "customer", attributes: { Name: "name", Region: "region" } },
    },
  };
  // The same tables, answered as "JSON Object" by default; and as XML under a root element of its own.
  const apiVersions = def.apiVersions as Record<string, unknown>;
  apiVersions.objects = { defaultResponseFormat: "jsonObject" };
  apiVersions.feed = { defaultResponseFormat: "xml", xmlRootElement: "CustomerFeed" };
  return def;
}

describe("response formats (CSV, XML, JSON Object)", () => {
  let platform: Platform;
  let demo: ReturnType<typeof projectClient>;
  let full: string;
  let west: string;
  let noDelete: string;
  const get = (key: string, path: string, headers: Record<string, string> = {}) =>
    demo.get(key, path, headers);

  before(async () => {
    platform = await startPlatform();
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    expect((await admin.putProject("acme", "demo", formatsProject())).status).to.equal(201);
    demo = projectClient(platform.baseUrl, "acme", "demo");
    full = (await admin.createKey("acme", "demo", { name: "full", roles: ["Full access"] })).body.apikey;
    west = (
      await admin.createKey("acme", "demo", {
        name: "west",
        roles: ["Region reader"],
        globals: { region: "west" },
      })
    ).body.apikey;
    noDelete = (await admin.createKey("acme", "demo", { name: "nd", roles: ["No delete"] })).body.apikey;
    const created = await demo.post(full, "customer", [
      { name: "Alpha", balance: 10, credit_limit: 100, region: "west", profile: { tier: "gold" } },
      { name: "Beta", region: "west" },
      { name: "Empty", region: "" },
      {
        ...HOSTILE,
        profile: { "a b": 1, "1x": "<&>", xmlns: true, "x:y": null, é: [1, { _x0041_: 2 }], "": "e" },
      },
      { name: "Ctl", region: "bell\u0007 and \uFFFF" },
    ]);
    expect(created.status).to.equal(201);
    expect(
      (
        await demo.post(full, "purchaseorder", [
          { customer_name: "Alpha", amount_total: 5 },
          { customer_name: "Alpha", amount_total: 7 },
          { customer_name: "Beta", amount_total: 9 },
        ])
      ).status,
    ).to.equal(201);
  });
  after(() => platform.close());

  describe("negotiation", () => {
    it("answers CSV for ?responseformat=csv with the RFC 4180 content type", async () => {
      const r = await get(full, "customer?responseformat=csv");
      expect(r.status).to.equal(200);
      expect(r.headers.get("content-type")).to.equal("text/csv; charset=utf-8; header=present");
      expect(r.headers.get("vary")).to.contain("X-CALiveAPICreator-ResponseFormat");
      const rows = readCsv(r.body);
      expect(rows[0]).to.deep.equal(["name", "balance", "credit_limit", "region", "profile"]);
      const json = await get(full, "customer");
      expect(rows.slice(1).map((row) => row[0])).to.deep.equal(
        json.body.map((c: { name: string }) => (c.name.startsWith("=") ? `'${c.name}` : c.name)),
      );
    });

    it("reads each of the original product's headers; the URL parameter beats them", async () => {
      for (const header of [
        "X-CALiveAPICreator-ResponseFormat",
        "X-EspressoLogic-ResponseFormat",
        "X-liveapicreatorLogic-ResponseFormat",
      ]) {
        const xml = await get(full, "customer/Alpha", { [header]: "xml" });
        expect(xml.headers.get("content-type"), header).to.equal("application/xml; charset=utf-8");
        expect(parseXml(xml.body).name).to.equal("response");
        const json = await get(full, "customer/Alpha?responseformat=json", { [header]: "csv" });
        expect(json.headers.get("content-type")).to.match(/^application\/json/);
        expect(json.body[0].name).to.equal("Alpha");
      }
      const csv = await get(full, "customer/Alpha?responseformat=CSV", {
        "X-EspressoLogic-ResponseFormat": "xml",
      });
      expect(readCsv(csv.body)[1]![0]).to.equal("Alpha");
    });

    it("an unknown format or conflicting headers are 400/4001, in JSON", async () => {
      for (const [path, headers] of [
        ["customer?responseformat=yaml", {}],
        ["customer", { "X-CALiveAPICreator-ResponseFormat": "html" }],
        ["customer", { "X-CALiveAPICreator-ResponseFormat": "csv", "X-EspressoLogic-ResponseFormat": "xml" }],
      ] as [string, Record<string, string>][]) {
        const r = await get(full, path, headers);
        expect([r.status, r.body.errorCode], path).to.deep.equal([400, 4001]);
        expect(r.headers.get("content-type")).to.match(/^application\/json/);
      }
    });
  });

  describe("JSON Object", () => {
    it("puts the records under 'data' for ?responseformat=jsonObject or a header, in any letter case", async () => {
      const plain = await get(full, "customer?pagesize=2");
      for (const [path, headers] of [
        ["customer?pagesize=2&responseformat=jsonObject", {}],
        ["customer?pagesize=2", { "X-CALiveAPICreator-ResponseFormat": "JSONOBJECT" }],
      ] as [string, Record<string, string>][]) {
        const r = await get(full, path, headers);
        expect(r.status, path).to.equal(200);
        expect(r.headers.get("content-type")).to.equal("application/json; charset=utf-8");
        expect(Object.keys(r.body)).to.deep.equal(["data"]);
        // The page as JSON answers it, next_batch entry included (which keeps the format).
        expect(r.body.data.slice(0, -1)).to.deep.equal(plain.body.slice(0, -1));
        expect(r.body.data.at(-1)["@metadata"].next_batch).to.be.a("string");
      }
    });

    it("is the answer of a version whose defaultResponseFormat is jsonObject; a request may still ask for json", async () => {
      const objects = projectClient(platform.baseUrl, "acme", "demo", "objects");
      const wrapped = await objects.get(full, "customer/Alpha");
      expect(wrapped.body.data[0].name).to.equal("Alpha");
      const meta = await objects.get(full, "@tables");
      expect(meta.body.data.map((t: { name: string }) => t.name)).to.include("customer");
      const asked = await objects.get(full, "customer/Alpha?responseformat=json");
      expect(asked.body[0].name).to.equal("Alpha");
    });

    it("leaves writes and errors as they are under a jsonObject default", async () => {
      const objects = projectClient(platform.baseUrl, "acme", "demo", "objects");
      const post = await objects.post(full, "customer", { name: "Objected" });
      expect(post.status).to.equal(201);
      expect(post.body.txsummary[0].name).to.equal("Objected");
      const missing = await objects.get(full, "nothing");
      expect([missing.status, missing.body.errorCode]).to.deep.equal([404, 4041]);
      expect(missing.body.data).to.equal(undefined);
    });
  });

  describe("XML root element", () => {
    it("is the version's xmlRootElement, and XML its default answer", async () => {
      const feed = projectClient(platform.baseUrl, "acme", "demo", "feed");
      const r = await feed.get(full, "customer/Alpha");
      expect(r.headers.get("content-type")).to.equal("application/xml; charset=utf-8");
      const root = parseXml(r.body);
      expect(root.name).to.equal("CustomerFeed");
      expect(child(childrenNamed(root, "item")[0]!, "name").text).to.equal("Alpha");
      expect(parseXml((await feed.get(full, "@tables/customer")).body).name).to.equal("CustomerFeed");
      expect((await feed.get(full, "customer/Alpha?responseformat=json")).body[0].name).to.equal("Alpha");
    });

    it("a version's xmlRootElement or defaultResponseFormat that cannot be one is refused with the definition", async () => {
      const admin = adminClient(platform.baseUrl, platform.adminToken);
      for (const [option, value] of [
        ["xmlRootElement", "1st"],
        ["xmlRootElement", "xml-feed"],
        ["xmlRootElement", "a b"],
        ["defaultResponseFormat", "csv"],
      ]) {
        const def = formatsProject();
        (def.apiVersions as Record<string, Record<string, unknown>>).v1![option!] = value;
        const r = await admin.putProject("acme", "refused", def);
        expect([r.status, r.body.errorCode], `${option} ${value}`).to.deep.equal([400, 4001]);
        expect(JSON.stringify(r.body.problems)).to.contain(`$.apiVersions.v1.${option}`);
      }
    });
  });

  describe("CSV", () => {
    it('is one row per object, RFC 4180 quoted, formulas defused, null empty and "" quoted', async () => {
      const r = await get(full, "customer?responseformat=csv&pagesize=100");
      const rows = csvObjects(r.body);
      const hostile = rows.find((row) => row.name === `'${HOSTILE.name}`)!;
      expect(hostile.region).to.equal(HOSTILE.region);
      expect(hostile.credit_limit).to.equal("-5");
      expect(JSON.parse(hostile.profile!)).to.deep.equal({
        "a b": 1,
        "1x": "<&>",
        xmlns: true,
        "x:y": null,
        é: [1, { _x0041_: 2 }],
        "": "e",
      });
      const alpha = rows.find((row) => row.name === "Alpha")!;
      expect(alpha).to.deep.include({ balance: "10", credit_limit: "100", region: "west" });
      expect(r.body).to.contain("Beta,0,0,west,\r\n");
      expect(r.body).to.contain('Empty,0,0,"",\r\n');
    });

    it("flattens parent sub-resources and leaves child collections out", async () => {
      const orders = readCsv((await get(full, "Orders?responseformat=csv")).body);
      expect(orders[0]).to.deep.equal([
        "Number",
        "Amount",
        "CustomerName",
        "Customer.Name",
        "Customer.Region",
      ]);
      expect(orders.slice(1).map((row) => row.slice(1))).to.deep.equal([
        ["5", "Alpha", "Alpha", "west"],
        ["7", "Alpha", "Alpha", "west"],
        ["9", "Beta", "Beta", "west"],
      ]);
      const customers = readCsv((await get(full, "Customers?responseformat=csv")).body);
      expect(customers[0]).to.deep.equal(["Name", "Balance", "Region"]);
    });

    it("has only the columns the key may read, also on an empty page", async () => {
      const r = await get(west, "customer?responseformat=csv");
      const rows = readCsv(r.body);
      expect(rows[0]).to.deep.equal(["name", "balance", "region"]);
      expect(rows.slice(1).map((row) => row[0])).to.deep.equal(["Alpha", "Beta"]);
      const none = await get(
        west,
        `customer?responseformat=csv&filter=${encodeURIComponent("name = 'Nobody'")}`,
      );
      expect(none.body).to.equal("name,balance,region\r\n");
    });

    it("names the next page in a Link header, which keeps the format", async () => {
      let url: string | undefined = `${demo.root}/customer?responseformat=csv&pagesize=2`;
      const names: string[] = [];
      let pages = 0;
      while (url) {
        const r: Reply = await call(platform.baseUrl, "GET", url, { headers: keyHeader(full) });
        const rows = readCsv(r.body);
        expect(rows.length).to.be.at.most(3);
        names.push(...rows.slice(1).map((row) => row[0]!));
        const link = r.headers.get("link");
        url = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]!.replace(platform.baseUrl, "") : undefined;
        if (url) expect(url).to.contain("responseformat=csv");
        pages++;
      }
      expect(pages).to.equal(3);
      const all = (await get(full, "customer?pagesize=100")).body.map((c: { name: string }) => c.name);
      expect(names).to.deep.equal(all.map((n: string) => (n.startsWith("=") ? `'${n}` : n)));
    });
  });

  describe("XML", () => {
    it("has a root element, metadata in attributes, encoded names and escaped texts", async () => {
      const r = await get(full, "customer?responseformat=xml&pagesize=100");
      expect(r.headers.get("content-type")).to.equal("application/xml; charset=utf-8");
      const root = parseXml(r.body);
      const json = (await get(full, "customer?pagesize=100")).body as {
        name: string;
        profile: Record<string, unknown>;
        "@metadata": { href: string; checksum: string };
      }[];
      const items = childrenNamed(root, "item");
      expect(items).to.have.length(json.length);
      const hostile = items.find((i) => child(i, "name").text === HOSTILE.name)!;
      const hostileJson = json.find((c) => c.name === HOSTILE.name)!;
      expect(hostile.attributes.href).to.equal(hostileJson["@metadata"].href);
      expect(hostile.attributes.checksum).to.equal(hostileJson["@metadata"].checksum);
      expect(child(hostile, "region").text).to.equal(HOSTILE.region);
      expect(child(hostile, "credit_limit").text).to.equal("-5");
      const profile = child(hostile, "profile");
      expect(profile.children.map((c) => c.name)).to.deep.equal([
        "a_x0020_b",
        "_x0031_x",
        "_x0078_mlns",
        "x_x003A_y",
        "_x00E9_",
        "_",
      ]);
      expect(profile.children.slice(0, 5).map((c) => decodeXmlName(c.name))).to.deep.equal(
        Object.keys(hostileJson.profile).filter((k) => k !== ""),
      );
      expect(child(profile, "_x0031_x").text).to.equal("<&>");
      expect(child(profile, "x_x003A_y").attributes["xsi:nil"]).to.equal("true");
      const [one, object] = childrenNamed(child(profile, "_x00E9_"), "item");
      expect(one!.text).to.equal("1");
      expect(child(object!, "_x005F_x0041_").text).to.equal("2");
      const ctl = items.find((i) => child(i, "name").text === "Ctl")!;
      expect(child(ctl, "region").text).to.equal("bell\uFFFD and \uFFFD");
      const empty = items.find((i) => child(i, "name").text === "Empty")!;
      expect(child(empty, "region").text).to.equal("");
      expect(child(empty, "profile").attributes["xsi:nil"]).to.equal("true");
      // Table rows carry their child links as `_links`.
      const alpha = items.find((i) => child(i, "name").text === "Alpha")!;
      const link = child(child(alpha, "_links"), "item");
      expect(child(link, "role").text).to.equal("orders");
    });

    it("nests sub-resources: child collections as items, parents as one element", async () => {
      const customers = parseXml((await get(full, "Customers?responseformat=xml")).body);
      const alpha = childrenNamed(customers, "item").find((i) => child(i, "Name").text === "Alpha")!;
      const orders = childrenNamed(child(alpha, "Orders"), "item");
      expect(orders.map((o) => child(o, "amount_total").text)).to.deep.equal(["5", "7"]);
      expect(orders[0]!.attributes.href).to.match(/\/Customers\.Orders\/\d+$/);
      const byOrder = parseXml((await get(full, "Orders?responseformat=xml")).body);
      const first = childrenNamed(byOrder, "item")[0]!;
      expect(child(child(first, "Customer"), "Name").text).to.equal("Alpha");
    });

    it("keeps next_batch as the last item and names it in a Link header", async () => {
      const r = await get(full, "customer?responseformat=xml&pagesize=2");
      const items = childrenNamed(parseXml(r.body), "item");
      expect(items).to.have.length(3);
      const next = items[2]! as XmlElement;
      expect(Object.keys(next.attributes)).to.deep.equal(["next_batch"]);
      expect(r.headers.get("link")).to.equal(`<${next.attributes.next_batch}>; rel="next"`);
    });
  });

  describe("errors and writes", () => {
    it("errors stay JSON whatever format was asked for", async () => {
      const forbidden = await get(west, "purchaseorder?responseformat=csv");
      expect([forbidden.status, forbidden.body.errorCode]).to.deep.equal([403, 4031]);
      expect(forbidden.headers.get("content-type")).to.match(/^application\/json/);
      const missing = await get(full, "nothing?responseformat=xml");
      expect([missing.status, missing.body.errorCode]).to.deep.equal([404, 4041]);
      const noKey = await call(platform.baseUrl, "GET", `${demo.root}/customer?responseformat=xml`);
      expect([noKey.status, noKey.body.errorCode]).to.deep.equal([401, 4011]);
      const badFilter = await get(full, "customer?responseformat=csv&filter=nope%20%3E");
      expect([badFilter.status, badFilter.body.errorCode]).to.deep.equal([400, 4002]);
      expect(badFilter.headers.get("link")).to.equal(null);
    });

    it("a write asking for CSV or XML is refused before anything is written", async () => {
      const post = await call(platform.baseUrl, "POST", `${demo.root}/customer?responseformat=csv`, {
        body: { name: "Refused" },
        headers: keyHeader(noDelete),
      });
      expect([post.status, post.body.errorCode]).to.deep.equal([400, 4001]);
      const put = await call(platform.baseUrl, "PUT", `${demo.root}/customer/Beta`, {
        body: { "@metadata": { checksum: "override" }, balance: 99 },
        headers: { ...keyHeader(full), "X-CALiveAPICreator-ResponseFormat": "xml" },
      });
      expect([put.status, put.body.errorCode]).to.deep.equal([400, 4001]);
      expect((await get(full, "customer/Refused")).body).to.deep.equal([]);
      expect((await get(full, "customer/Beta")).body[0].balance).to.equal(0);
      // The official SDK sends `X-liveapicreatorLogic-ResponseFormat: json` on every call.
      const sdkLike = await call(platform.baseUrl, "POST", `${demo.root}/customer`, {
        body: { name: "Accepted" },
        headers: { ...keyHeader(full), "X-liveapicreatorLogic-ResponseFormat": "json" },
      });
      expect(sdkLike.status).to.equal(201);
    });
  });

  describe("meta endpoints", () => {
    it("@tables and @resources as CSV; @tables/<name>, @license and @heartbeat as XML", async () => {
      expect(readCsv((await get(full, "@tables?responseformat=csv")).body)).to.deep.equal([
        ["name", "prefix", "entity"],
        ["customer", "main", "customer"],
        ["purchaseorder", "main", "purchaseorder"],
      ]);
      const resources = csvObjects((await get(full, "@resources?responseformat=csv")).body);
      expect(resources.map((r) => r.name)).to.deep.equal([
        "Customers",
        "Customers.Orders",
        "Orders",
        "Orders.Customer",
      ]);
      const table = parseXml(
        (await get(full, "@tables/customer", { "X-CALiveAPICreator-ResponseFormat": "xml" })).body,
      );
      expect(childrenNamed(child(table, "columns"), "item").map((c) => child(c, "name").text)).to.deep.equal([
        "name",
        "balance",
        "credit_limit",
        "region",
        "profile",
      ]);
      const license = await call(platform.baseUrl, "GET", `${demo.root}/@license?responseformat=xml`);
      expect(child(parseXml(license.body), "company").text).to.equal("Tessera");
      const heartbeat = await call(platform.baseUrl, "GET", `${demo.root}/@heartbeat?responseformat=xml`);
      expect(child(parseXml(heartbeat.body), "status").text).to.equal("ok");
    });

    it("CSV where it has no meaning is 400/4001", async () => {
      for (const path of ["@tables/customer", "@license", "@heartbeat", "@docs"]) {
        const r = await get(full, `${path}?responseformat=csv`);
        expect([r.status, r.body.errorCode], path).to.deep.equal([400, 4001]);
      }
      const docsXml = await get(full, "@docs?responseformat=xml");
      expect([docsXml.status, docsXml.body.errorCode]).to.deep.equal([400, 4001]);
    });
  });
});
