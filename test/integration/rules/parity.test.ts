/**
 * Rules beyond one level: project libraries in the rules' sandbox (and hostile
 * library code contained), parents more than one level up in formulas,
 * validations and events (with grand-parent changes reaching the rows that read
 * them), and `logicContext.insert` answering the stored row.
 */
import { expect } from "chai";
import { startPlatform } from "../../support/platform.ts";
import {
  allRows,
  type CanonicalSetup,
  type Row,
  RULE_TIME_LIMIT_MS,
  setupProject,
  summaryShape,
} from "./support.ts";

const HELPERS = `
function round2(x) { return Math.round(x * 100) / 100; }
var TAX = 0.2;
`;

/** customer ← purchaseorder ← lineitem, payment ← receipt; a library of helpers. */
function shopProject(helpers = HELPERS): Row {
  return {
    tables: {
      customer: {
        key: ["name"],
        columns: {
          name: { type: "string", required: true },
          region: { type: "string" },
          discount: { type: "number", default: 0 },
        },
      },
      purchaseorder: {
        key: ["order_number"],
        columns: {
          order_number: { type: "integer", generated: true },
          customer_name: { type: "string", required: true },
          amount_total: { type: "number", default: 0 },
          paid: { type: "boolean", default: false },
          receipt_note: { type: "string" },
        },
        parents: {
          customer: { table: "customer", columns: { customer_name: "name" }, children: "orders" },
        },
      },
      lineitem: {
        key: ["id"],
        columns: {
          id: { type: "integer", generated: true },
          order_number: { type: "integer", required: true },
          qty: { type: "integer", default: 1 },
          price: { type: "number", default: 0 },
          gross: { type: "number" },
          net: { type: "number" },
          region: { type: "string" },
          region_at_order: { type: "string" },
          note: { type: "string" },
        },
        parents: {
          order: { table: "purchaseorder", columns: { order_number: "order_number" }, children: "items" },
        },
      },
      payment: {
        key: ["id"],
        columns: {
          id: { type: "integer", generated: true },
          order_number: { type: "integer", required: true },
          amount: { type: "number", default: 0 },
          fee: { type: "number" },
          status: { type: "string", default: "new" },
        },
      },
      receipt: {
        key: ["id"],
        columns: {
          id: { type: "integer", generated: true },
          payment_id: { type: "integer", required: true },
          text: { type: "string" },
        },
        parents: { payment: { table: "payment", columns: { payment_id: "id" }, children: "receipts" } },
      },
      batch: {
        key: ["id"],
        columns: { id: { type: "integer", generated: true }, n: { type: "integer", default: 0 } },
      },
      probe: {
        key: ["id"],
        columns: { id: { type: "integer", generated: true }, seen: { type: "string" } },
      },
    },
    apiVersions: { v1: {} },
    roles: { "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
    libraries: { helpers: { code: helpers } },
    rules: [
      {
        name: "gross",
        table: "lineitem",
        type: "formula",
        column: "gross",
        expression: "round2(row.qty * row.price * (1 + TAX))",
      },
      {
        name: "net",
        table: "lineitem",
        type: "formula",
        column: "net",
        expression: "round2(row.gross * (1 - row.order.customer.discount))",
      },
      {
        name: "region",
        table: "lineitem",
        type: "formula",
        column: "region",
        expression: "row.order.customer.region",
      },
      {
        name: "region at order",
        table: "lineitem",
        type: "parentCopy",
        column: "region_at_order",
        parent: "order.customer",
        from: "region",
      },
      {
        name: "open region",
        table: "lineitem",
        type: "validation",
        expression: "row.order.customer.region !== 'closed'",
        message: "line {id}: the customer's region is closed",
      },
      {
        name: "order total",
        table: "purchaseorder",
        type: "sum",
        column: "amount_total",
        children: "items",
        of: "net",
      },
      {
        name: "fee",
        table: "payment",
        type: "formula",
        column: "fee",
        expression: "round2(row.amount * 0.01)",
      },
      {
        name: "pay",
        table: "purchaseorder",
        type: "event",
        code: `if (row.paid && !(oldRow && oldRow.paid)) {
  const p = logicContext.insert('payment', {order_number: row.order_number, amount: row.amount_total});
  logicContext.insert('receipt', {payment_id: p.id, text: 'payment ' + p.id + ' fee ' + p.fee + ' ' + p.status});
}`,
      },
      {
        name: "batch",
        table: "batch",
        type: "event",
        code: `for (let i = 0; i < row.n; i++) {
  const p = logicContext.insert('payment', {order_number: -row.id, amount: i});
  logicContext.insert('receipt', {payment_id: p.id, text: 'batch ' + row.id + ' #' + i});
}`,
      },
      {
        name: "probe",
        table: "probe",
        type: "formula",
        column: "seen",
        expression: "typeof probeHost === 'function' ? probeHost() : 'no probe'",
      },
    ],
  };
}

describe("rules: libraries, grand-parents and inserted rows", () => {
  let s: CanonicalSetup;
  const get = async (path: string) => (await s.api.get(s.key, path)).body[0];
  const put = async (path: string, changes: Row) => {
    const before = await get(path);
    return s.api.put(s.key, path, { "@metadata": { checksum: before["@metadata"].checksum }, ...changes });
  };
  const redefine = async (definition: Row) => {
    const r = await s.admin.putProject("acme", "shop", definition);
    expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201]);
  };

  before(async () => {
    s = await setupProject(shopProject(), {
      platform: await startPlatform({ SANDBOX_TIMEOUT_MS: RULE_TIME_LIMIT_MS }),
    });
    for (const [name, region, discount] of [
      ["Alpha", "north", 0.1],
      ["Beta", "south", 0],
    ] as const) {
      expect((await s.api.post(s.key, "customer", { name, region, discount })).status).to.equal(201);
    }
  });
  after(async () => {
    await s.platform.close();
  });

  it("formulas call library functions and read the grand-parent", async () => {
    const order = (await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" })).body.txsummary[0];
    const r = await s.api.post(s.key, "lineitem", { order_number: order.order_number, qty: 3, price: 10 });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body.txsummary[0]).to.include({
      gross: 36,
      net: 32.4,
      region: "north",
      region_at_order: "north",
    });
    expect(r.body.txsummary[1]).to.include({ order_number: order.order_number, amount_total: 32.4 });
  });

  it("a grand-parent's change recomputes every line that reads it, and only those, with one store read per level", async () => {
    const beta = (await s.api.post(s.key, "purchaseorder", { customer_name: "Beta" })).body.txsummary[0];
    await s.api.post(s.key, "lineitem", { order_number: beta.order_number, qty: 1, price: 100 });
    const second = (await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" })).body.txsummary[0];
    await s.api.post(s.key, "lineitem", { order_number: second.order_number, qty: 1, price: 50 });
    await s.api.post(s.key, "lineitem", { order_number: second.order_number, qty: 2, price: 50 });

    const r = await put("customer/Alpha", { region: "east", discount: 0.5 });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const shape = summaryShape(r.body.txsummary);
    expect(shape[0]).to.deep.equal(["customer", "UPDATE"]);
    expect(shape.filter(([t]) => t === "lineitem")).to.have.length(3);
    expect(shape.filter(([t]) => t === "purchaseorder")).to.have.length(2);
    const lines = await allRows(s.api, s.key, "lineitem");
    const byOrder = (n: number) => lines.filter((l) => l.order_number === n);
    for (const l of lines) {
      const alpha = l.order_number !== beta.order_number;
      expect(l.region, JSON.stringify(l)).to.equal(alpha ? "east" : "south");
      // A copy is taken when the line is inserted (or moved to another order), not kept up to date.
      expect(l.region_at_order).to.equal(alpha ? "north" : "south");
      expect(l.net).to.equal(alpha ? l.gross * 0.5 : l.gross);
    }
    const orders = Object.fromEntries(
      (await allRows(s.api, s.key, "purchaseorder")).map((o) => [o.order_number, o]),
    );
    expect(orders[second.order_number].amount_total).to.equal(
      byOrder(second.order_number).reduce((a, l) => a + l.net, 0),
    );
    expect(orders[beta.order_number].amount_total).to.equal(120);
  });

  it("moving an order to another customer recomputes its lines from the new grand-parent", async () => {
    const order = (await allRows(s.api, s.key, "purchaseorder")).find((o) => o.customer_name === "Beta")!;
    const r = await put(`purchaseorder/${order.order_number}`, { customer_name: "Alpha" });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const line = (await allRows(s.api, s.key, "lineitem")).find(
      (l) => l.order_number === order.order_number,
    )!;
    expect(line).to.include({ region: "east", gross: 120, net: 60, region_at_order: "south" });
    expect((await get(`purchaseorder/${order.order_number}`)).amount_total).to.equal(60);
  });

  it("a validation that reads the grand-parent rejects the request and changes nothing", async () => {
    const before = await allRows(s.api, s.key, "lineitem");
    const r = await put("customer/Alpha", { region: "closed" });
    expect(r.status).to.equal(400);
    expect(r.body.errorCode).to.equal(4004);
    expect(r.body.errorMessage).to.match(/^line \d+: the customer's region is closed$/);
    expect(await allRows(s.api, s.key, "lineitem")).to.deep.equal(before);
    expect((await get("customer/Alpha")).region).to.equal("east");
  });

  it("logicContext.insert answers the stored row: its generated key, defaults and formulas", async () => {
    const order = (await allRows(s.api, s.key, "purchaseorder")).find((o) => o.amount_total > 0)!;
    const r = await put(`purchaseorder/${order.order_number}`, { paid: true });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(summaryShape(r.body.txsummary)).to.deep.equal([
      ["purchaseorder", "UPDATE"],
      ["payment", "INSERT"],
      ["receipt", "INSERT"],
    ]);
    const [, payment, receipt] = r.body.txsummary;
    expect(payment.id).to.be.a("number");
    expect(payment).to.include({
      order_number: order.order_number,
      amount: order.amount_total,
      status: "new",
    });
    expect(payment.fee).to.equal(Math.round(order.amount_total) / 100);
    expect(receipt).to.include({
      payment_id: payment.id,
      text: `payment ${payment.id} fee ${payment.fee} new`,
    });
    expect(await allRows(s.api, s.key, "payment")).to.have.length(1);
    expect(await allRows(s.api, s.key, "receipt")).to.have.length(1);
  });

  it("an event may read every row it inserts, more often than the limit of event rounds", async () => {
    const n = 60; // the engine allows 50 rounds of events inserting rows; resuming an event is not one
    const r = await s.api.post(s.key, "batch", { n });
    expect(r.status, JSON.stringify(r.body).slice(0, 500)).to.equal(201);
    const id = r.body.txsummary[0].id;
    const payments = (await allRows(s.api, s.key, "payment")).filter((p) => p.order_number === -id);
    const receipts = (await allRows(s.api, s.key, "receipt")).filter((x) =>
      x.text.startsWith(`batch ${id} #`),
    );
    expect(payments).to.have.length(n);
    expect(receipts).to.have.length(n);
    const byAmount = new Map(payments.map((p) => [p.amount, p.id]));
    for (const receipt of receipts) {
      const i = Number(receipt.text.split("#")[1]);
      expect(receipt.payment_id).to.equal(byAmount.get(i));
    }
  });

  it("the row logicContext.insert returns cannot be read in an early event (it is not stored yet)", async () => {
    const def = shopProject();
    def.rules.push({
      name: "early insert",
      table: "probe",
      type: "earlyEvent",
      code: "const p = logicContext.insert('payment', {order_number: 1}); row.seen = String(p.id);",
    });
    await redefine(def);
    const before = await allRows(s.api, s.key, "payment");
    const r = await s.api.post(s.key, "probe", {});
    expect(r.status).to.equal(500);
    expect(r.body.errorCode).to.equal(5001);
    expect(r.body.errorMessage).to.equal(
      "Rule 'early insert' failed: RuleError: the row logicContext.insert returns can be read in events only (early events and formulas run before it is stored)",
    );
    expect(await allRows(s.api, s.key, "payment")).to.deep.equal(before);
    await redefine(shopProject());
  });

  it("a library change reaches the rules on the next request", async () => {
    const order = (await s.api.post(s.key, "purchaseorder", { customer_name: "Beta" })).body.txsummary[0];
    await redefine(shopProject(HELPERS.replace("var TAX = 0.2;", "var TAX = 0.5;")));
    const r = await s.api.post(s.key, "lineitem", { order_number: order.order_number, qty: 1, price: 10 });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body.txsummary[0]).to.include({ gross: 15 });
    await redefine(shopProject());
  });

  describe("hostile library code is contained", () => {
    const hostile = async (code: string, rules?: (def: Row) => void) => {
      const def = shopProject(`${HELPERS}\n${code}`);
      rules?.(def);
      await redefine(def);
      return s.api.post(s.key, "probe", {});
    };
    afterEach(async () => {
      await redefine(shopProject());
      const r = await s.api.post(s.key, "probe", {});
      expect(r.status, "the project's rules work again once the library is fixed").to.equal(201);
      expect(r.body.txsummary[0].seen).to.equal("no probe");
    });

    it("a library that loops forever while loading fails the write (500/5001) and writes nothing", async () => {
      const before = (await allRows(s.api, s.key, "probe")).length;
      const r = await hostile("for (;;) {}");
      expect(r.status, JSON.stringify(r.body)).to.equal(500);
      expect(r.body.errorCode).to.equal(5001);
      // The write's own time limit ends first (loading may take twice as long), then the load fails.
      expect(r.body.errorMessage).to.match(/longer than the limit|could not be loaded/);
      const again = await s.api.post(s.key, "probe", {});
      expect(again.status).to.equal(500);
      expect(again.body.errorCode).to.equal(5001);
      expect(await allRows(s.api, s.key, "probe")).to.have.length(before);
    });

    it("a library function that loops forever is stopped at the time limit", async () => {
      const r = await hostile("function probeHost() { for (;;) {} }");
      expect(r.status).to.equal(500);
      expect(r.body.errorCode).to.equal(5001);
      expect(r.body.errorMessage).to.match(/longer than the limit/);
    });

    it("a library function that hogs memory is stopped at the memory limit", async () => {
      const r = await hostile(
        "function probeHost() { const a = []; for (;;) a.push(new Array(1e6).fill(1)); }",
      );
      expect(r.status).to.equal(500);
      expect(r.body.errorCode).to.equal(5001);
      expect(r.body.errorMessage).to.match(/memory|longer than the limit/);
    });

    it("a library reaches no host object", async () => {
      const r = await hostile(`function probeHost() {
  const out = [typeof process, typeof require, typeof module, typeof setImmediate, typeof WebAssembly];
  try { out.push(typeof Function("return process")()); } catch (e) { out.push("threw"); }
  try { out.push(typeof globalThis.constructor.constructor("return this.process")()); } catch (e) { out.push("threw"); }
  return out.join(",");
}`);
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      const seen = r.body.txsummary[0].seen.split(",");
      expect(seen).to.have.length(7);
      for (const v of seen) expect(v).to.be.oneOf(["undefined", "threw"]);
    });

    it("a library cannot replace the rules' entry point", async () => {
      const r = await hostile("function tesseraRules() { return []; }");
      expect(r.status).to.equal(500);
      expect(r.body.errorCode).to.equal(5001);
      expect(r.body.errorMessage).to.match(/rules could not be loaded/);
    });
  });

  it("a library that does not parse is refused when the project has rules", async () => {
    const r = await s.admin.putProject("acme", "shop", shopProject("function ("));
    expect(r.status).to.equal(400);
    expect(r.body.errorCode).to.equal(4001);
    expect(r.body.problems.map((p: Row) => p.path)).to.deep.equal(["$.libraries.helpers.code"]);
  });

  it("a read through a grand-parent of an unknown attribute is refused with its path", async () => {
    const def = shopProject();
    def.rules[2].expression = "row.order.customer.regio";
    const r = await s.admin.putProject("acme", "shop", def);
    expect(r.status).to.equal(400);
    expect(r.body.problems).to.deep.equal([
      {
        path: "$.rules[2].expression",
        message: "'regio' is not an attribute of 'customer' (read as 'order.customer.regio')",
      },
    ]);
  });
});
