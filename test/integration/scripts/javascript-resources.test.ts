/**
 * JavaScript resources through the edge, on the real stores and real
 * sandbox processes: answers computed with the read API, which reads as the
 * caller (roles, row filters, column lists) and only in the caller's project;
 * parameters and principal handed in (never the key); hostile code contained
 * within its limits while other projects keep answering; every failure in the
 * documented error shape, and the code's error text never in the logs.
 */
import { Writable } from "node:stream";
import { compileErrors, validate } from "@readme/openapi-parser";
import { expect } from "chai";
import { parse } from "csv-parse/sync";
import { fingerprint } from "../../../shared/loggable-error.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

// The sandbox's time limit here. Long enough that the memory hogs reach the memory limit first even on
// a loaded machine (about 0.3–0.5 s of CPU on an idle one; at 1.5 s they hit the time limit when both
// cores ran eight busy loops besides the test).
/** Far beyond what the memory hog needs to reach the memory limit, also with its sandbox process starved of CPU. */
const TIMEOUT_MS = 10_000;

/** Every log line both services write, as text. */
function logSink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => lines.join("") };
}

const RESOURCES: Record<string, string> = {
  // Balance per region, from every customer the caller may read.
  RegionTotals: `
    const page = await tessera.get("customer", { pagesize: 100, order: "name" });
    const totals = {};
    for (const c of page.rows) totals[c.region ?? "none"] = (totals[c.region ?? "none"] ?? 0) + c.balance;
    return totals;`,
  // Customers with their order count and total, one page of customers as the client asked.
  CustomerOrders: `
    const page = await tessera.get("customer", { pagesize: request.pagesize, offset: request.offset, order: "name" });
    const rows = [];
    for (const c of page.rows) {
      const orders = await tessera.get("purchaseorder", { filter: "customer_name = '" + c.name.replaceAll("'", "''") + "'", pagesize: 100 });
      rows.push({ name: c.name, orders: orders.rows.length, total: orders.rows.reduce((s, o) => s + o.amount_total, 0) });
    }
    if (page.next) rows.push({ "@metadata": { next_batch: request.nextBatch } });
    return rows;`,
  // What the read API shows the caller, row by row.
  Visible: `
    const page = await tessera.get("customer", { pagesize: 100, nometa: true, order: "name" });
    return page.rows;`,
  Echo: "return { request, principal };",
  OneCustomer: `
    const page = await tessera.get("customer", { key: request.key });
    return page.rows;`,
  AllPages: `
    const names = []; let next = {};
    do {
      const page = await tessera.get("customer", { pagesize: 2, ...next });
      names.push(...page.rows.map((c) => c.name));
      next = page.next;
    } while (next);
    return names;`,
  ReadsOrders: `
    try { await tessera.get("purchaseorder"); return { read: true }; }
    catch (e) { return { read: false, error: e.name + ": " + e.message }; }`,
  ReadsElsewhere: `
    const attempts = {};
    for (const [label, name, options] of [
      ["other table", "invoice", {}],
      ["dotted", "globex/shop/v1/customer", {}],
      ["account option", "customer", { account: "globex" }],
      ["project option", "customer", { project: "other" }],
      ["href", "http://127.0.0.1/rest/globex/shop/v1/customer", {}],
    ]) {
      try { await tessera.get(name, options); attempts[label] = "read"; }
      catch (e) { attempts[label] = e.message; }
    }
    const own = await tessera.get("customer", { pagesize: 100, nometa: true });
    attempts.own = own.rows.map((c) => c.name).sort();
    return attempts;`,
  Escape: `
    const probe = (f) => { try { const v = f(); return v === undefined ? "undefined" : typeof v; } catch (e) { return e.name; } };
    return {
      process: typeof process, require: typeof require, fetch: typeof fetch, module: typeof module,
      constructorProcess: probe(() => globalThis.constructor.constructor("return process")()),
      functionProcess: probe(() => Function("return typeof process")() === "undefined" ? undefined : "found"),
      dynamicImport: await import("node:fs").then(() => "imported", (e) => e.message),
      tesseraKeys: Object.getOwnPropertyNames(tessera),
    };`,
  Throws: "throw new TypeError('no such thing: ' + ['marker', request.params.n].join('-'));",
  Loops: "while (true) {}",
  Hog: "const hog = []; while (true) hog.push(new Array(1e6).fill('x' + hog.length));",
  Huge: "return Array.from({ length: 200000 }, (_, i) => ({ i, text: 'row ' + i }));",
  Flood: `
    let reads = 0;
    try { for (;;) { await tessera.get("customer", { pagesize: 1 }); reads++; } }
    catch (e) { throw new Error("stopped after " + reads + " reads: " + e.message); }`,
  Scalar: "return 42;",
  ForgedChecksum: `
    const page = await tessera.get("customer", { pagesize: 1 });
    const row = page.rows[0];
    row["@metadata"].checksum = "override";
    return [row];`,
  MovedChecksum: `
    const page = await tessera.get("customer", { pagesize: 2, order: "name" });
    const [a, b] = page.rows;
    a["@metadata"].checksum = b["@metadata"].checksum;
    return [a];`,
  KeepsChecksum: `
    const page = await tessera.get("customer", { pagesize: 2, order: "name" });
    return page.rows.map((c) => ({ "@metadata": { href: c["@metadata"].href, checksum: c["@metadata"].checksum }, label: c.name.toUpperCase() }));`,
  Nested: "return [{ name: 'a', tags: ['x', 'y'], address: { city: 'Paris' } }, { name: 'b', extra: true }];",
  UsesLibrary: "return { greeting: greet(principal.roles[0]) };",
  AdminsOnly: "return { secret: 'for admins' };",
};

function scriptsProject() {
  const def = demoProject() as ReturnType<typeof demoProject> & Record<string, unknown>;
  const resources = def.apiVersions.v1.resources as Record<string, unknown>;
  for (const [name, code] of Object.entries(RESOURCES)) resources[name] = { type: "javascript", code };
  resources.AdminsOnly = { type: "javascript", code: RESOURCES.AdminsOnly, roles: ["Full access"] };
  (def.apiVersions.v1 as Record<string, unknown>).libraries = ["greetings"];
  def.libraries = { greetings: { code: "function greet(name) { return 'Hello, ' + name; }" } };
  return def;
}

/** Another project (of the account, or of another account): the same tables, and one more. */
function otherProject() {
  const def = demoProject();
  (def.tables as Record<string, unknown>).invoice = { key: ["id"], columns: { id: { type: "integer" } } };
  return def;
}

describe("JavaScript resources", function () {
  this.timeout(60_000);
  let platform: Platform;
  let logs: ReturnType<typeof logSink>;
  let demo: ReturnType<typeof projectClient>;
  let full: string;
  let west: string;
  let globexKey: string;

  before(async () => {
    logs = logSink();
    platform = await startPlatform(
      // The account's CPU share of the sandbox is not under test here (a loop spins for the whole limit).
      { SANDBOX_TIMEOUT_MS: String(TIMEOUT_MS), SANDBOX_ACCOUNT_CPU_MS: "3600000" },
      { logSink: logs.stream },
    );
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await admin.putAccount("globex");
    const put = await admin.putProject("acme", "demo", scriptsProject());
    expect(put.status, JSON.stringify(put.body)).to.equal(201);
    demo = projectClient(platform.baseUrl, "acme", "demo");
    full = await admin.keyWith("acme", "demo", ["Full access"]);
    west = await admin.keyWith("acme", "demo", ["Region reader"], { region: "west" });
    expect(
      (
        await demo.post(full, "customer", [
          { name: "Alpha", balance: 10, credit_limit: 100, region: "west" },
          { name: "Beta", balance: 20, credit_limit: 200, region: "west" },
          { name: "Gamma", balance: 5, credit_limit: 300, region: "east" },
          { name: "O'Neil", balance: 1, credit_limit: 400, region: "east" },
        ])
      ).status,
    ).to.equal(201);
    expect(
      (
        await demo.post(full, "purchaseorder", [
          { customer_name: "Alpha", amount_total: 7 },
          { customer_name: "Alpha", amount_total: 8 },
          { customer_name: "Gamma", amount_total: 1 },
        ])
      ).status,
    ).to.equal(201);
    // The same table names elsewhere: another project of the account, a project of another account.
    for (const [account, project, customer] of [
      ["acme", "other", "OtherProjectRow"],
      ["globex", "shop", "GlobexRow"],
    ] as const) {
      expect((await admin.putProject(account, project, otherProject())).status).to.equal(201);
      const key = await admin.keyWith(account, project, ["Full access"]);
      if (account === "globex") globexKey = key;
      const client = projectClient(platform.baseUrl, account, project);
      expect((await client.post(key, "customer", { name: customer, region: "west" })).status).to.equal(201);
    }
  });

  after(async () => {
    await platform?.close();
  });

  it("computes its answer with the read API", async () => {
    const r = await demo.get(full, "RegionTotals");
    expect(r.status).to.equal(200);
    expect(r.headers.get("content-type")).to.match(/^application\/json/);
    expect(r.body).to.deep.equal({ west: 30, east: 6 });
    const o = await demo.get(full, "CustomerOrders?pagesize=2");
    expect(o.body.slice(0, 2)).to.deep.equal([
      { name: "Alpha", orders: 2, total: 15 },
      { name: "Beta", orders: 0, total: 0 },
    ]);
    // Paging as the code decides: request.nextBatch names the next page with the same parameters.
    const next = o.body[2]["@metadata"].next_batch as string;
    expect(next).to.match(/\/rest\/acme\/demo\/v1\/CustomerOrders\?pagesize=2&offset=2$/);
    const page2 = await call(platform.baseUrl, "GET", new URL(next).pathname + new URL(next).search, {
      headers: { authorization: `Tessera ${full}:1` },
    });
    expect(page2.body).to.deep.equal([
      { name: "Gamma", orders: 1, total: 1 },
      { name: "O'Neil", orders: 0, total: 0 },
    ]);
  });

  it("pages through a table with the read API's `next`, and reads one object by key", async () => {
    expect((await demo.get(full, "AllPages")).body).to.deep.equal(["Alpha", "Beta", "Gamma", "O'Neil"]);
    const one = await demo.get(full, "OneCustomer/O'Neil");
    expect(one.body).to.have.length(1);
    expect(one.body[0].name).to.equal("O'Neil");
    expect(one.body[0]["@metadata"].href).to.match(/\/rest\/acme\/demo\/v1\/customer\/O'Neil$/);
  });

  it("reads as the caller: a restricted key sees only its rows and columns", async () => {
    const r = await demo.get(west, "Visible");
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal([
      { name: "Alpha", balance: 10, region: "west" },
      { name: "Beta", balance: 20, region: "west" },
    ]);
    expect((await demo.get(west, "RegionTotals")).body).to.deep.equal({ west: 30 });
    // A table its roles do not let it read: the read API refuses, as a GET would.
    const denied = await demo.get(west, "ReadsOrders");
    expect(denied.body).to.deep.equal({
      read: false,
      error: "TesseraHostError: tessera.get: The key's roles do not allow read on 'purchaseorder'",
    });
    expect((await demo.get(full, "ReadsOrders")).body).to.deep.equal({ read: true });
  });

  it("cannot read another project or account", async () => {
    const r = await demo.get(full, "ReadsElsewhere");
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({
      "other table": "tessera.get: no resource 'invoice' in version 'v1'",
      dotted: "tessera.get: no resource 'globex/shop/v1/customer' in version 'v1'",
      "account option":
        "tessera.get: unknown option 'account' (key, parent, filter, order, sysfilter, sysorder, pagesize, offset, pagekey, nometa)",
      "project option":
        "tessera.get: unknown option 'project' (key, parent, filter, order, sysfilter, sysorder, pagesize, offset, pagekey, nometa)",
      href: "tessera.get: no resource 'http://127.0.0.1/rest/globex/shop/v1/customer' in version 'v1'",
      own: ["Alpha", "Beta", "Gamma", "O'Neil"],
    });
    // The other project's own key does not open this project's resources either.
    expect((await demo.get(globexKey, "RegionTotals")).status).to.equal(401);
  });

  it("hands the code the parameters and the principal, never the key", async () => {
    const r = await call(
      platform.baseUrl,
      "GET",
      `${demo.root}/Echo/a%20b?region=west&tag=1&tag=2&pagesize=5&auth=${full}:1`,
    );
    expect(r.status).to.equal(200);
    const { request, principal } = r.body;
    expect(request).to.deep.include({ method: "GET", resource: "Echo", key: "a b", pagesize: 5, offset: 0 });
    expect(request.params).to.deep.equal({ region: "west", tag: ["1", "2"], pagesize: "5" });
    expect(request.nextBatch).to.match(/\/Echo\/a%20b\?region=west&tag=1&tag=2&pagesize=5&offset=5$/);
    expect(principal.roles).to.deep.equal(["Full access"]);
    expect(principal.globals).to.include({ "_project.name": "demo", "_account.name": "acme" });
    const w = await demo.get(west, "Echo");
    expect(w.body.principal.roles).to.deep.equal(["Region reader"]);
    expect(w.body.principal.globals.region).to.equal("west");
    for (const key of [full, west]) {
      expect(JSON.stringify(r.body) + JSON.stringify(w.body)).to.not.contain(key);
    }
  });

  it("cannot reach the host: no process, require, fetch or Node objects", async () => {
    const r = await demo.get(full, "Escape");
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.deep.equal({
      process: "undefined",
      require: "undefined",
      fetch: "undefined",
      module: "undefined",
      constructorProcess: "ReferenceError",
      functionProcess: "undefined",
      dynamicImport: "Not supported",
      tesseraKeys: ["get"],
    });
  });

  it("uses the version's libraries", async () => {
    const r = await demo.get(full, "UsesLibrary");
    expect(r.body).to.deep.equal({ greeting: "Hello, Full access" });
  });

  it("answers only GET; a resource with roles answers only keys with one of them", async () => {
    for (const method of ["POST", "PUT", "DELETE"]) {
      const r = await call(platform.baseUrl, method, `${demo.root}/RegionTotals`, {
        body: method === "DELETE" ? undefined : {},
        headers: { authorization: `Tessera ${full}:1` },
      });
      expect(r.status, method).to.equal(405);
      expect(r.body.errorCode).to.equal(4051);
    }
    expect((await demo.get(full, "AdminsOnly")).body).to.deep.equal({ secret: "for admins" });
    const denied = await demo.get(west, "AdminsOnly");
    expect(denied.status).to.equal(403);
    expect(denied.body).to.include({
      errorCode: 4031,
      errorMessage: "The key's roles do not allow calling 'AdminsOnly'",
    });
  });

  it("code errors are 500/5001 naming the resource; the logs carry a fingerprint, never the text", async () => {
    const r = await demo.get(full, "Throws?n=1234");
    expect(r.status).to.equal(500);
    expect(r.body).to.include({
      statusCode: 500,
      errorCode: 5001,
      errorMessage: "The JavaScript resource 'Throws' failed: TypeError: no such thing: marker-1234",
    });
    expect(r.body.requestId).to.be.a("string");
    const scalar = await demo.get(full, "Scalar");
    expect(scalar.status).to.equal(500);
    expect(scalar.body.errorMessage).to.equal(
      "The JavaScript resource 'Scalar' answered a number; expected an array or an object",
    );
    expect(
      logs
        .text()
        .split("\n")
        .filter((l) => l.includes("marker-1234")),
      "log lines",
    ).to.deep.equal([]);
    expect(logs.text()).to.contain(r.body.requestId);
    const failed = logs
      .text()
      .split("\n")
      .filter((line) => line.includes('"project script failed"'))
      .map((line) => JSON.parse(line));
    const throws = failed.find((l) => l.script === "The JavaScript resource 'Throws'");
    // The key names the project's incarnation: `<account>/<project>@<uid>/<version>/scripts`.
    expect(throws.programKey).to.match(/^acme\/demo@[0-9a-f-]{36}\/v1\/scripts$/);
    expect(throws).to.deep.include({
      kind: "script",
      fingerprint: fingerprint("TypeError: no such thing: marker-1234"),
    });
  });

  it("contains hostile code: loops, memory, huge answers and read floods fail cleanly; others keep working", async () => {
    const other = projectClient(platform.baseUrl, "globex", "shop");
    // While one of its calls spins, another project's requests are answered: counted while the
    // loop's answer is still outstanding (the order of events, not a latency).
    let spinning = true;
    const looping = demo.get(full, "Loops").finally(() => {
      spinning = false;
    });
    let answeredWhileSpinning = 0;
    while (spinning) {
      const r = await other.get(globexKey, "customer");
      expect(r.status).to.equal(200);
      expect(r.body[0].name).to.equal("GlobexRow");
      if (spinning) answeredWhileSpinning++;
    }
    expect(answeredWhileSpinning, "another project's reads answered while the loop spun").to.be.at.least(3);
    const loop = await looping;
    expect(loop.status).to.equal(500);
    expect(loop.body).to.include({
      errorCode: 5001,
      errorMessage: `The JavaScript resource 'Loops' ran longer than the limit of ${TIMEOUT_MS} ms`,
    });
    const hog = await demo.get(full, "Hog");
    expect(hog.status).to.equal(500);
    expect(hog.body.errorMessage).to.equal(
      "The JavaScript resource 'Hog' used more memory than the sandbox allows",
    );
    const huge = await demo.get(full, "Huge");
    expect(huge.status).to.equal(500);
    expect(huge.body.errorMessage).to.match(
      /^The JavaScript resource 'Huge' answered what is not plain JSON data: .*larger than 1048576 characters/,
    );
    const flood = await demo.get(full, "Flood");
    expect(flood.status).to.equal(500);
    expect(flood.body.errorMessage).to.equal(
      "The JavaScript resource 'Flood' failed: Error: stopped after 20 reads: tessera.get: more than 20 reads in one call",
    );
    // The project still answers afterwards.
    expect((await demo.get(full, "RegionTotals")).body).to.deep.equal({ west: 30, east: 6 });
  });

  it("never hands out a checksum Tessera did not give for that object", async () => {
    for (const name of ["ForgedChecksum", "MovedChecksum"]) {
      const r = await demo.get(full, name);
      expect(r.status, name).to.equal(500);
      expect(r.body.errorMessage, r.body.errorMessage).to.match(
        new RegExp(
          `^The JavaScript resource '${name}' answered a @metadata.checksum that is not the one Tessera gave for .*/customer/Alpha$`,
        ),
      );
    }
    const kept = await demo.get(full, "KeepsChecksum");
    expect(kept.status).to.equal(200);
    expect(kept.body.map((c: { label: string }) => c.label)).to.deep.equal(["ALPHA", "BETA"]);
    // The checksum is the real one: an update with it succeeds.
    const update = await demo.put(full, "customer/Alpha", {
      "@metadata": { checksum: kept.body[0]["@metadata"].checksum },
      credit_limit: 101,
    });
    expect(update.status).to.equal(200);
  });

  it("answers CSV for lists of objects and XML for any answer; CSV of other answers is 400", async () => {
    const csv = await demo.get(full, "Nested?responseformat=csv");
    expect(csv.status).to.equal(200);
    expect(csv.headers.get("content-type")).to.match(/^text\/csv/);
    expect(parse(csv.body as string, { record_delimiter: "\r\n" })).to.deep.equal([
      ["name", "tags", "address", "extra"],
      ["a", '["x","y"]', '{"city":"Paris"}', ""],
      ["b", "", "", "true"],
    ]);
    const xml = await demo.get(full, "RegionTotals?responseformat=xml");
    expect(xml.status).to.equal(200);
    expect(xml.body).to.contain("<west>30</west>");
    const paged = await demo.get(full, "CustomerOrders?pagesize=2&responseformat=csv");
    expect(paged.headers.get("link")).to.match(/offset=2.*>; rel="next"$/);
    expect(parse(paged.body as string, { record_delimiter: "\r\n" })).to.have.length(3);
    const refused = await demo.get(full, "AllPages?responseformat=csv");
    expect(refused.status).to.equal(400);
    expect(refused.body).to.include({
      errorCode: 4001,
      errorMessage:
        "The answer of 'AllPages' is not a list of objects, so it has no CSV form; use json or xml",
    });
  });

  it("is listed by @resources and documented by @docs", async () => {
    const listed = await demo.get(full, "@resources");
    const entry = listed.body.find((r: { name: string }) => r.name === "RegionTotals");
    expect(entry).to.deep.include({ name: "RegionTotals", resource_type: "JavaScript", apiVersion: "v1" });
    const docs = await demo.get(full, "@docs");
    expect(docs.status).to.equal(200);
    const result = await validate(structuredClone(docs.body));
    expect(result.valid, result.valid ? "" : compileErrors(result)).to.equal(true);
    expect(docs.body.paths["/RegionTotals"].get.operationId).to.equal("list.RegionTotals");
    expect(docs.body.paths["/RegionTotals/{key}"].get.operationId).to.equal("get.RegionTotals");
    expect(docs.body.paths["/RegionTotals"].post).to.equal(undefined);
    expect(docs.body.paths["/AdminsOnly"]).to.be.an("object");
    // A key without the resource's roles does not see it documented.
    const westDocs = await demo.get(west, "@docs");
    expect(westDocs.body.paths["/AdminsOnly"]).to.equal(undefined);
    expect(westDocs.body.paths["/RegionTotals"]).to.be.an("object");
  });

  it("definitions with broken JavaScript are refused with every problem", async () => {
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    const def = demoProject() as ReturnType<typeof demoProject> & Record<string, unknown>;
    Object.assign(def.apiVersions.v1.resources, {
      customer: { type: "javascript", code: "return 1;" },
      Broken: { type: "javascript", code: "return (;" },
      Roles: { type: "javascript", code: "return 1;", roles: ["Nobody"] },
      Empty: { type: "javascript", code: "" },
      Typo: { type: "javascript", code: "return 1;", table: "customer" },
    });
    (def.apiVersions.v1 as Record<string, unknown>).libraries = ["missing"];
    const r = await admin.putProject("acme", "broken", def);
    expect(r.status).to.equal(400);
    const problems = (r.body.problems as { path: string; message: string }[]).map(
      (p) => `${p.path}: ${p.message}`,
    );
    expect(problems).to.have.members([
      "$.apiVersions.v1.resources.customer: resource name 'customer' is already used (tables are resources too)",
      "$.apiVersions.v1.resources.Broken.code: Unexpected token at line 1, column 9",
      "$.apiVersions.v1.resources.Roles.roles[0]: no role 'Nobody'",
      "$.apiVersions.v1.resources.Empty.code: must not be empty",
      "$.apiVersions.v1.resources.Typo.table: unknown field 'table'",
      "$.apiVersions.v1.libraries[0]: no library 'missing' in 'libraries'",
    ]);
  });
});
