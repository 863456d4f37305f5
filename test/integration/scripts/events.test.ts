/**
 * Request and response events of an API version through the edge, on the
 * real stores and real sandbox processes: a request event refuses with the
 * 4xx of its choosing and nothing is written, or passes, or adjusts a write's
 * body (which is still checked in full); a response event reshapes GET and
 * write answers but cannot widen what the caller sees nor forge a checksum;
 * a request event that throws refuses the request (400/4900) with the
 * thrown message; hostile or failing event code is 500/5001 naming the
 * event, and a write whose request event fails writes nothing.
 */
import { expect } from "chai";
import { parse } from "csv-parse/sync";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

// The sandbox's time limit here. Long enough that the memory hogs reach the memory limit first even on
// a loaded machine (about 0.3–0.5 s of CPU on an idle one; at 1.5 s they hit the time limit when both
// cores ran eight busy loops besides the test).
const TIMEOUT_MS = 4000;

const GUARD = `
  const p = request.params;
  if (p.bad === "status") return { reject: { statusCode: 500, errorMessage: "no" } };
  if (p.bad === "code") return { reject: { statusCode: 400, errorCode: 4001 } };
  if (p.bad === "typo") return { reject: { statusCode: 400, message: "typo" } };
  if (p.bad === "body") return { body: { name: "FromGet" } };
  if (p.bad === "throw") throw new Error("guard broke on " + request.method);
  if (p.bad === "throwEmpty") throw new Error("");
  if (p.bad === "loop") while (true) {}
  if (p.bad === "hog") { const hog = []; while (true) hog.push(new Array(1e5).fill("x" + hog.length)); }
  if (p.block === "yes") return { reject: { statusCode: 403, errorMessage: "Blocked on request" } };
  if (p.block === "default") return { reject: { statusCode: 409 } };
  if (request.method === "POST" && request.resource === "purchaseorder") {
    const orders = Array.isArray(request.body) ? request.body : [request.body];
    if (orders.some((o) => o.amount_total > 1000))
      return { reject: { statusCode: 422, errorCode: 4922, errorMessage: "Orders above 1000 need approval (" + principal.roles.join(",") + ")" } };
  }`;

/** Unnamed: changes a customer body in place. */
const NORMALIZE = `
  if (request.resource === "customer" && request.body && !Array.isArray(request.body)) {
    if (typeof request.body.region === "string") request.body.region = request.body.region.toUpperCase();
    if (request.params.widen === "1") request.body.credit_limit = 999999;
  }`;

const SHAPE = `
  const p = request.params;
  const body = response.body;
  if (p.shape === "wrap") return { count: body.length, rows: body };
  if (p.shape === "note") { body.note = "status " + response.statusCode + " for " + principal.roles.join(","); return; }
  if (p.shape === "forge") { (body.txsummary ?? body)[0]["@metadata"].checksum = "override"; return body; }
  if (p.shape === "widen") {
    const all = await tessera.get("customer", { pagesize: 100, order: "name" });
    return all.rows.map((r) => ({ ...r, credit_limit: r.credit_limit ?? "hidden" }));
  }
  if (p.shape === "flat") return body.map((c) => (c.name === undefined ? c : { name: c.name, region: c.region }));
  if (p.shape === "fail") throw new Error("shape broke after " + response.statusCode);
  if (p.shape === "scalar") return "text";
  if (p.shape === "loop") while (true) {}`;

function eventsProject() {
  const def = demoProject() as ReturnType<typeof demoProject> & Record<string, unknown>;
  Object.assign(def.roles, {
    "Region writer": {
      tables: {
        customer: {
          access: ["read", "insert", "update"],
          rowFilter: "region = @{region}",
          columns: ["name", "balance", "region"],
        },
      },
    },
  });
  Object.assign(def.apiVersions.v1.resources, {
    Hello: { type: "javascript", code: "return { hello: request.params.who ?? 'world' };" },
  });
  (def.apiVersions.v1 as Record<string, unknown>).events = [
    { type: "request", name: "guard", code: GUARD },
    { type: "request", code: NORMALIZE },
    { type: "response", name: "shape", code: SHAPE },
  ];
  // A version without events, over the same tables.
  (def.apiVersions as Record<string, unknown>).v2 = { resources: {} };
  return def;
}

describe("request and response events", function () {
  this.timeout(60_000);
  let platform: Platform;
  let demo: ReturnType<typeof projectClient>;
  let plain: ReturnType<typeof projectClient>;
  let full: string;
  let westWriter: string;

  const post = (key: string, path: string, body: unknown) => demo.post(key, path, body);
  const count = async (table: string) => {
    const r = await plain.get(full, `${table}?pagesize=1000&nometa=true`);
    return (r.body as unknown[]).length;
  };
  const expectError = (r: Reply, status: number, errorCode: number, message: string | RegExp) => {
    expect(r.status, JSON.stringify(r.body)).to.equal(status);
    expect(Object.keys(r.body).sort()).to.deep.equal([
      "errorCode",
      "errorMessage",
      "requestId",
      "statusCode",
    ]);
    expect(r.body.statusCode).to.equal(status);
    expect(r.body.errorCode).to.equal(errorCode);
    if (typeof message === "string") expect(r.body.errorMessage).to.equal(message);
    else expect(r.body.errorMessage).to.match(message);
  };

  before(async () => {
    platform = await startPlatform({ SANDBOX_TIMEOUT_MS: String(TIMEOUT_MS) });
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    const put = await admin.putProject("acme", "demo", eventsProject());
    expect(put.status, JSON.stringify(put.body)).to.equal(201);
    demo = projectClient(platform.baseUrl, "acme", "demo");
    plain = projectClient(platform.baseUrl, "acme", "demo", "v2");
    full = await admin.keyWith("acme", "demo", ["Full access"]);
    westWriter = await admin.keyWith("acme", "demo", ["Region writer"], { region: "WEST" });
    expect(
      (
        await plain.post(full, "customer", [
          { name: "Alpha", balance: 10, credit_limit: 100, region: "WEST" },
          { name: "Beta", balance: 20, credit_limit: 200, region: "WEST" },
          { name: "Gamma", balance: 5, credit_limit: 300, region: "EAST" },
        ])
      ).status,
    ).to.equal(201);
  });

  after(async () => {
    await platform?.close();
  });

  describe("request events", () => {
    it("refuse with the status, code and message of their choosing; nothing is written", async () => {
      const before = await count("purchaseorder");
      const r = await post(full, "purchaseorder", [
        { customer_name: "Alpha", amount_total: 5 },
        { customer_name: "Alpha", amount_total: 5000 },
      ]);
      expectError(r, 422, 4922, "Orders above 1000 need approval (Full access)");
      expect(await count("purchaseorder")).to.equal(before);
      // On reads too, and with the default code and message.
      expectError(await demo.get(full, "customer?block=yes"), 403, 4900, "Blocked on request");
      expectError(
        await demo.get(full, "customer?block=default"),
        409,
        4900,
        "Refused by the request event 'guard'",
      );
      expectError(await demo.get(full, "Hello?block=yes"), 403, 4900, "Blocked on request");
      // The version without events is not affected.
      expect((await plain.get(full, "customer?block=yes")).status).to.equal(200);
    });

    it("pass: the request goes on as sent", async () => {
      const r = await post(full, "purchaseorder", { customer_name: "Alpha", amount_total: 7 });
      expect(r.status).to.equal(201);
      expect(r.body.txsummary[0]).to.include({ customer_name: "Alpha", amount_total: 7 });
      expect((await demo.get(full, "Hello?who=you")).body).to.deep.equal({ hello: "you" });
    });

    it("adjust a write's body, which still goes through every check", async () => {
      const r = await post(full, "customer", { name: "Delta", region: "north" });
      expect(r.status).to.equal(201);
      expect(r.body.txsummary[0]).to.include({ name: "Delta", region: "NORTH" });
      // The restricted key may not write credit_limit: the adjusted body is refused as if it had sent it.
      const before = await count("customer");
      const widened = await demo.post(westWriter, "customer?widen=1", { name: "Epsilon", region: "west" });
      expectError(widened, 400, 4003, /credit_limit/);
      expect(await count("customer")).to.equal(before);
      // Its row filter still applies to the adjusted row (region WEST, upper-cased by the event).
      const own = await demo.post(westWriter, "customer", { name: "Zeta", region: "west" });
      expect(own.status, JSON.stringify(own.body)).to.equal(201);
    });

    it("that throw refuse the request with 400/4900 and the thrown message, never a stack; nothing is written", async () => {
      const before = await count("customer");
      const cases: [Promise<Reply>, string][] = [
        [post(full, "customer?bad=throw", { name: "Thrown" }), "guard broke on POST"],
        [demo.get(full, "customer?bad=throw"), "guard broke on GET"],
        [demo.get(full, "customer?bad=throwEmpty"), "Refused by the request event 'guard'"],
      ];
      for (const [reply, message] of cases) expectError(await reply, 400, 4900, message);
      expect(await count("customer")).to.equal(before);
    });

    it("answers that break the rules are 500/5001 naming the event; nothing is written", async () => {
      const before = await count("customer");
      const cases: [string, RegExp][] = [
        [
          "status",
          /^The request event 'guard' refused with statusCode 500; a request event refuses with 400 to 499$/,
        ],
        [
          "code",
          /^The request event 'guard' refused with errorCode 4001; a request event's codes are 4900 to 4999$/,
        ],
        [
          "typo",
          /^The request event 'guard' answered 'reject' with 'message'; it takes statusCode, errorCode and errorMessage$/,
        ],
        ["loop", new RegExp(`^The request event 'guard' ran longer than the limit of ${TIMEOUT_MS} ms$`)],
        ["hog", /^The request event 'guard' used more memory than the sandbox allows$/],
      ];
      for (const [bad, message] of cases) {
        expectError(await post(full, `customer?bad=${bad}`, { name: `Bad-${bad}` }), 500, 5001, message);
      }
      expect(await count("customer")).to.equal(before);
      expectError(
        await demo.get(full, "customer?bad=body"),
        500,
        5001,
        "The request event 'guard' answered a body, but only a POST or PUT has one",
      );
      // Afterwards the version answers as before.
      expect((await demo.get(full, "customer")).status).to.equal(200);
    });
  });

  describe("response events", () => {
    it("reshape a GET answer", async () => {
      const r = await demo.get(full, "customer?shape=wrap&pagesize=2");
      expect(r.status).to.equal(200);
      expect(r.body.count).to.equal(3);
      expect(r.body.rows[0].name).to.equal("Alpha");
      expect(r.body.rows[2]["@metadata"].next_batch).to.be.a("string");
      const note = await demo.get(full, "Hello?shape=note");
      expect(note.body).to.deep.equal({ hello: "world", note: "status 200 for Full access" });
    });

    it("reshape a write's answer (the status stays)", async () => {
      const r = await post(full, "customer?shape=note", { name: "Eta", region: "south" });
      expect(r.status).to.equal(201);
      expect(r.body.statusCode).to.equal(201);
      expect(r.body.note).to.equal("status 201 for Full access");
      expect(r.body.txsummary[0]).to.include({ name: "Eta", region: "SOUTH" });
    });

    it("cannot widen what the caller sees", async () => {
      // The event reads with the caller's own read API: the restricted key's rows and columns only.
      const r = await demo.get(westWriter, "customer?shape=widen");
      expect(r.status).to.equal(200);
      expect(r.body.map((c: { name: string }) => c.name)).to.deep.equal(["Alpha", "Beta", "Zeta"]);
      for (const c of r.body) expect(c.credit_limit).to.equal("hidden");
      const full_ = await demo.get(full, "customer?shape=widen");
      expect(full_.body.find((c: { name: string }) => c.name === "Gamma").credit_limit).to.equal(300);
    });

    it("cannot forge a checksum, on reads or writes", async () => {
      expectError(
        await demo.get(full, "customer?shape=forge"),
        500,
        5001,
        /^The response event 'shape' answered a @metadata.checksum that is not the one Tessera gave for .*\/customer\/Alpha$/,
      );
      const before = await count("customer");
      const r = await post(full, "customer?shape=forge", { name: "Theta" });
      expectError(
        r,
        500,
        5001,
        /^The response event 'shape' answered a @metadata.checksum .*\/customer\/Theta \(the write was committed; only its answer failed\)$/,
      );
      expect(await count("customer")).to.equal(before + 1);
    });

    it("failures are 500/5001 naming the event; after a write, the message says it was committed", async () => {
      expectError(
        await demo.get(full, "customer?shape=fail"),
        500,
        5001,
        "The response event 'shape' failed: Error: shape broke after 200",
      );
      expectError(
        await demo.get(full, "customer?shape=scalar"),
        500,
        5001,
        "The response event 'shape' answered a string; expected an array or an object",
      );
      expectError(
        await demo.get(full, "customer?shape=loop"),
        500,
        5001,
        `The response event 'shape' ran longer than the limit of ${TIMEOUT_MS} ms`,
      );
      const r = await post(full, "customer?shape=fail", { name: "Iota" });
      expectError(
        r,
        500,
        5001,
        "The response event 'shape' failed: Error: shape broke after 201 (the write was committed; only its answer failed)",
      );
      expect((await plain.get(full, "customer/Iota")).body).to.have.length(1);
    });

    it("a reshaped answer's CSV has the answer's columns", async () => {
      const r = await call(
        platform.baseUrl,
        "GET",
        `${demo.root}/customer?shape=flat&responseformat=csv&pagesize=2`,
        {
          headers: keyHeader(full),
        },
      );
      expect(r.status).to.equal(200);
      expect(parse(r.body as string, { record_delimiter: "\r\n" })).to.deep.equal([
        ["name", "region"],
        ["Alpha", "WEST"],
        ["Beta", "WEST"],
      ]);
    });
  });
});
