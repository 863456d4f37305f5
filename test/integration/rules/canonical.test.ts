/**
 * Issue 5, step 5: the canonical example (examples/canonical) end to end. Every
 * step checks the txsummary and then recounts every aggregate from scratch.
 */
import { expect } from "chai";
import {
  type CanonicalSetup,
  type Row,
  readState,
  recountProblems,
  setupProject,
  summaryShape,
} from "./support.ts";

describe("logic: the canonical example (customer / purchaseorder / lineitem / product)", () => {
  let s: CanonicalSetup;
  let widget: number;
  let gadget: number;
  let order1: number;
  let order2: number;
  let line: Row;

  const recount = async () => {
    const state = await readState(s.api, s.key);
    expect(recountProblems(state)).to.deep.equal([]);
    return state;
  };
  const get = async (path: string) => {
    const r = await s.api.get(s.key, path);
    expect(r.status).to.equal(200);
    return r.body[0];
  };

  before(async () => {
    s = await setupProject();
    expect((await s.api.post(s.key, "customer", { name: "Alpha", credit_limit: 1000 })).status).to.equal(201);
    const p1 = await s.api.post(s.key, "product", { name: "Widget", price: 10 });
    const p2 = await s.api.post(s.key, "product", { name: "Gadget", price: 25.5 });
    widget = p1.body.txsummary[0].product_number;
    gadget = p2.body.txsummary[0].product_number;
    const o1 = await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" });
    const o2 = await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" });
    order1 = o1.body.txsummary[0].order_number;
    order2 = o2.body.txsummary[0].order_number;
    // An empty unpaid order counts, but adds nothing to the balance.
    expect(summaryShape(o1.body.txsummary)).to.deep.equal([
      ["purchaseorder", "INSERT"],
      ["customer", "UPDATE"],
    ]);
  });
  after(() => s.close());

  it("insert a line item: line item INSERT, order UPDATE (amount_total), customer UPDATE (balance)", async () => {
    const r = await s.api.post(s.key, "lineitem", {
      order_number: order1,
      product_number: widget,
      qty_ordered: 3,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    // The client's object first, then every other changed object once (in the order rules reached them).
    expect(summaryShape(r.body.txsummary)).to.deep.equal([
      ["lineitem", "INSERT"],
      ["purchaseorder", "UPDATE"],
      ["product", "UPDATE"],
      ["customer", "UPDATE"],
    ]);
    const [li, order, product, customer] = r.body.txsummary;
    expect(li).to.include({ qty_ordered: 3, product_price: 10, amount: 30 });
    expect(order).to.include({ order_number: order1, amount_total: 30, item_count: 1, smallest_item: 30 });
    expect(customer).to.include({ name: "Alpha", balance: 30, biggest_order: 30 });
    expect(product).to.include({ quantity_ordered: 3 });
    // Every entry's checksum is the row's new one.
    expect((await get(`purchaseorder/${order1}`))["@metadata"].checksum).to.equal(
      order["@metadata"].checksum,
    );
    expect((await get("customer/Alpha"))["@metadata"].checksum).to.equal(customer["@metadata"].checksum);
    line = li;
    await recount();
  });

  it("change the quantity", async () => {
    const r = await s.api.put(s.key, `lineitem/${line.lineitem_id}`, {
      "@metadata": { checksum: line["@metadata"].checksum },
      qty_ordered: 5,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.txsummary[0]).to.include({ amount: 50 });
    expect(r.body.txsummary[1]).to.include({ amount_total: 50 });
    expect(r.body.txsummary[3]).to.include({ balance: 50 });
    line = r.body.txsummary[0];
    await recount();
  });

  it("change the product: the price is copied again", async () => {
    const r = await s.api.put(s.key, `lineitem/${line.lineitem_id}`, {
      "@metadata": { checksum: line["@metadata"].checksum },
      product_number: gadget,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.txsummary[0]).to.include({ product_price: 25.5, amount: 127.5 });
    const shape = summaryShape(r.body.txsummary);
    expect(shape.filter(([res]) => res === "product")).to.have.length(2);
    line = r.body.txsummary[0];
    const state = await recount();
    expect(state.customer[0]).to.include({ balance: 127.5 });
  });

  it("a later change of the product's price is not copied into existing lines", async () => {
    const p = await get(`product/${gadget}`);
    const r = await s.api.put(s.key, `product/${gadget}`, {
      "@metadata": { checksum: p["@metadata"].checksum },
      price: 30,
    });
    expect(r.status).to.equal(200);
    expect(summaryShape(r.body.txsummary)).to.deep.equal([["product", "UPDATE"]]);
    expect((await get(`lineitem/${line.lineitem_id}`)).product_price).to.equal(25.5);
  });

  it("move the line item to another order", async () => {
    const add = await s.api.post(s.key, "lineitem", {
      order_number: order2,
      product_number: widget,
      qty_ordered: 1,
    });
    expect(add.status).to.equal(201);
    const r = await s.api.put(s.key, `lineitem/${line.lineitem_id}`, {
      "@metadata": { checksum: line["@metadata"].checksum },
      order_number: order2,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const orders = r.body.txsummary.filter((e: Row) => e["@metadata"].resource === "purchaseorder");
    expect(orders.map((o: Row) => [o.order_number, o.amount_total, o.item_count])).to.have.deep.members([
      [order1, 0, 0],
      [order2, 137.5, 2],
    ]);
    line = r.body.txsummary[0];
    const state = await recount();
    expect(state.purchaseorder.find((o) => o.order_number === order1)).to.include({ smallest_item: null });
    expect(state.purchaseorder.find((o) => o.order_number === order2)).to.include({ smallest_item: 10 });
  });

  it("a validation that fails rejects the whole request with its message filled in", async () => {
    const before = await readState(s.api, s.key);
    const r = await s.api.post(s.key, "lineitem", {
      order_number: order1,
      product_number: widget,
      qty_ordered: 1000,
    });
    expect(r.status).to.equal(400);
    expect(r.body).to.include({ errorCode: 4004, errorMessage: "balance 10137.5 exceeds credit limit 1000" });
    expect(await readState(s.api, s.key)).to.deep.equal(before);
    const bad = await s.api.post(s.key, "lineitem", {
      order_number: order1,
      product_number: widget,
      qty_ordered: -2,
    });
    expect(bad.body).to.include({ errorCode: 4004, errorMessage: "quantity must be positive, not -2" });
  });

  it("delete the line item", async () => {
    const r = await s.api.delete(
      s.key,
      `lineitem/${line.lineitem_id}?checksum=${encodeURIComponent(line["@metadata"].checksum)}`,
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.txsummary[0]["@metadata"]).to.include({ verb: "DELETE" });
    const state = await recount();
    expect(state.purchaseorder.find((o) => o.order_number === order2)).to.include({
      amount_total: 10,
      item_count: 1,
    });
  });

  it("pay the order: balance drops, a payment row is inserted by an event", async () => {
    const o = await get(`purchaseorder/${order2}`);
    const r = await s.api.put(s.key, `purchaseorder/${order2}?rulesummary=true`, {
      "@metadata": { checksum: o["@metadata"].checksum },
      paid: true,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(summaryShape(r.body.txsummary)).to.deep.equal([
      ["purchaseorder", "UPDATE"],
      ["customer", "UPDATE"],
      ["payment", "INSERT"],
    ]);
    expect(r.body.txsummary[1]).to.include({ balance: 0, unpaid_orders: 1 });
    expect(r.body.txsummary[2]).to.include({ order_number: order2, customer_name: "Alpha", amount: 10 });
    const rules = r.body.rulesummary.map((e: Row) => [
      e["@metadata"].resource,
      e.rules.map((x: Row) => x.name),
    ]);
    expect(rules[0]).to.deep.equal(["purchaseorder", ["record payment", "no empty paid orders"]]);
    expect(rules[1][1]).to.include.members(["customer balance", "unpaid orders", "credit limit"]);
    await recount();
  });

  it("an empty order cannot be paid (commit validation)", async () => {
    const o = await get(`purchaseorder/${order1}`);
    const r = await s.api.put(s.key, `purchaseorder/${order1}`, {
      "@metadata": { checksum: o["@metadata"].checksum },
      paid: true,
    });
    expect(r.status).to.equal(400);
    expect(r.body).to.include({
      errorCode: 4004,
      errorMessage: `order ${order1} has no items and cannot be paid`,
    });
  });

  it("derived attributes cannot be set by the client", async () => {
    const c = await get("customer/Alpha");
    const r = await s.api.put(s.key, "customer/Alpha", {
      "@metadata": { checksum: c["@metadata"].checksum },
      balance: 5,
    });
    expect(r.status).to.equal(400);
    expect(r.body.errorCode).to.equal(4003);
  });

  it("writes through a custom resource run the same rules; parents are reported under the resource they were reached through", async () => {
    const r = await s.api.post(s.key, "Customers.Orders.Items", {
      OrderNumber: order1,
      ProductNumber: widget,
      Quantity: 2,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(summaryShape(r.body.txsummary)).to.deep.equal([
      ["Customers.Orders.Items", "INSERT"],
      ["Customers.Orders", "UPDATE"],
      ["product", "UPDATE"],
      ["Customers", "UPDATE"],
    ]);
    expect(r.body.txsummary[0]).to.include({ Quantity: 2, Amount: 20 });
    expect(r.body.txsummary[3]).to.include({ Name: "Alpha", Balance: 20 });
    await recount();
  });

  it("a nested insert of an order with its line items computes everything in one request", async () => {
    const r = await s.api.post(s.key, "purchaseorder", {
      customer_name: "Alpha",
      lineitems: [
        { product_number: widget, qty_ordered: 1 },
        { product_number: gadget, qty_ordered: 2 },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body.txsummary[0]).to.include({ amount_total: 70, item_count: 2, smallest_item: 10 });
    await recount();
  });
});
