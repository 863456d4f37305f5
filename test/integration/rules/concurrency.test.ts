/**
 * Issue 5, "never lose an update": many requests adjusting the same parents at
 * once. Every adjustment is a guarded write; a request whose guard fails is
 * planned again on top of the other one's result.
 */
import { expect } from "chai";
import { type CanonicalSetup, readState, recountProblems, setupProject } from "./support.ts";

describe("logic: concurrent writers on the same parents", function () {
  this.timeout(120_000);
  let s: CanonicalSetup;
  let orders: number[];
  let products: number[];

  before(async () => {
    s = await setupProject();
    await s.api.post(s.key, "customer", { name: "Busy", credit_limit: 1_000_000 });
    products = [];
    for (const [name, price] of [
      ["Widget", 1.1],
      ["Gadget", 2.25],
    ] as const) {
      products.push((await s.api.post(s.key, "product", { name, price })).body.txsummary[0].product_number);
    }
    orders = [];
    for (let i = 0; i < 5; i++) {
      orders.push(
        (await s.api.post(s.key, "purchaseorder", { customer_name: "Busy" })).body.txsummary[0].order_number,
      );
    }
  });
  after(() => s.close());

  it("50 concurrent line-item inserts across 5 orders of one customer: every aggregate exact", async () => {
    const started = Date.now();
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        s.api.post(s.key, "lineitem", {
          order_number: orders[i % 5],
          product_number: products[i % 2],
          qty_ordered: 1 + (i % 7),
        }),
      ),
    );
    const elapsed = Date.now() - started;
    expect(replies.filter((r) => r.status !== 201).map((r) => r.body)).to.deep.equal([]);
    const state = await readState(s.api, s.key);
    expect(state.lineitem).to.have.length(50);
    expect(recountProblems(state)).to.deep.equal([]);
    const expected = Array.from({ length: 50 }, (_, i) => (1 + (i % 7)) * [1.1, 2.25][i % 2]!).reduce(
      (a, b) => a + b,
      0,
    );
    expect(state.customer[0]!.balance).to.be.closeTo(expected, 1e-9);
    expect(state.purchaseorder.reduce((a, o) => a + o.item_count, 0)).to.equal(50);
    console.log(`      50 concurrent inserts took ${elapsed} ms`);
  });

  it("concurrent moves, quantity changes and deletes keep every aggregate exact", async () => {
    const lines = (await readState(s.api, s.key)).lineitem;
    const replies = await Promise.all(
      lines.slice(0, 30).map((li, i) => {
        if (i % 3 === 0) return s.api.delete(s.key, `lineitem/${li.lineitem_id}?checksum=override`);
        const change = i % 3 === 1 ? { order_number: orders[(i + 1) % 5] } : { qty_ordered: 10 };
        return s.api.put(s.key, `lineitem/${li.lineitem_id}`, {
          "@metadata": { checksum: "override" },
          ...change,
        });
      }),
    );
    expect(replies.filter((r) => r.status !== 200).map((r) => r.body)).to.deep.equal([]);
    expect(recountProblems(await readState(s.api, s.key))).to.deep.equal([]);
  });
});
