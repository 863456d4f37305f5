/**
 * Issue 5, model-based property test (fast-check): random sequences of
 * inserts, updates, re-parents and deletes over the canonical example. After
 * every step each stored sum / count / min / max / formula equals a
 * recomputation from the rows, and a rejected step changed nothing.
 */
import { expect } from "chai";
import fc from "fast-check";
import { projectClient } from "../../support/http.ts";
import { startPlatform } from "../../support/platform.ts";
import {
  type CanonicalSetup,
  type CanonicalState,
  readState,
  recountProblems,
  setupProject,
} from "./support.ts";

type Action =
  | { kind: "insertLine"; order: number; product: number; qty: number }
  | { kind: "insertLines"; order: number; products: number[]; qty: number }
  | { kind: "quantity"; line: number; qty: number }
  | { kind: "moveLine"; line: number; order: number }
  | { kind: "product"; line: number; product: number }
  | { kind: "deleteLine"; line: number }
  | { kind: "insertOrder"; customer: number; paid: boolean }
  | { kind: "orderWithLines"; customer: number; product: number; qty: number }
  | { kind: "moveOrder"; order: number; customer: number }
  | { kind: "pay"; order: number; paid: boolean }
  | { kind: "deleteOrder"; order: number }
  | { kind: "creditLimit"; customer: number; limit: number }
  | { kind: "price"; product: number; price: number };

const idx = fc.nat(50);
const qty = fc.integer({ min: -1, max: 6 });
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant("insertLine" as const), order: idx, product: idx, qty }),
    weight: 5,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("insertLines" as const),
      order: idx,
      products: fc.array(idx, { minLength: 2, maxLength: 3 }),
      qty,
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant("quantity" as const), line: idx, qty }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant("moveLine" as const), line: idx, order: idx }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant("product" as const), line: idx, product: idx }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("deleteLine" as const), line: idx }), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant("insertOrder" as const), customer: idx, paid: fc.boolean() }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ kind: fc.constant("orderWithLines" as const), customer: idx, product: idx, qty }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant("moveOrder" as const), order: idx, customer: idx }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("pay" as const), order: idx, paid: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("deleteOrder" as const), order: idx }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant("creditLimit" as const),
      customer: idx,
      limit: fc.integer({ min: 0, max: 300 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("price" as const),
      product: idx,
      price: fc.integer({ min: 1, max: 40 }),
    }),
    weight: 1,
  },
);

const pick = <T>(list: T[], i: number): T | undefined =>
  list.length === 0 ? undefined : list[i % list.length];

/** Sends one action; returns the HTTP status (or undefined when the action does not apply to the state). */
async function perform(
  api: CanonicalSetup["api"],
  key: string,
  st: CanonicalState,
  a: Action,
): Promise<number | undefined> {
  const href = (table: string, id: unknown) => `${table}/${encodeURIComponent(String(id))}`;
  const put = (table: string, id: unknown, body: Record<string, unknown>) =>
    api.put(key, href(table, id), { "@metadata": { checksum: "override" }, ...body });
  switch (a.kind) {
    case "insertLine": {
      const o = pick(st.purchaseorder, a.order);
      const p = pick(st.product, a.product);
      if (!o || !p) return undefined;
      return (
        await api.post(key, "lineitem", {
          order_number: o.order_number,
          product_number: p.product_number,
          qty_ordered: a.qty,
        })
      ).status;
    }
    case "insertLines": {
      const o = pick(st.purchaseorder, a.order);
      if (!o || st.product.length === 0) return undefined;
      const body = a.products.map((p) => ({
        order_number: o.order_number,
        product_number: pick(st.product, p)!.product_number,
        qty_ordered: a.qty,
      }));
      return (await api.post(key, "lineitem", body)).status;
    }
    case "quantity": {
      const l = pick(st.lineitem, a.line);
      return l ? (await put("lineitem", l.lineitem_id, { qty_ordered: a.qty })).status : undefined;
    }
    case "moveLine": {
      const l = pick(st.lineitem, a.line);
      const o = pick(st.purchaseorder, a.order);
      return l && o
        ? (await put("lineitem", l.lineitem_id, { order_number: o.order_number })).status
        : undefined;
    }
    case "product": {
      const l = pick(st.lineitem, a.line);
      const p = pick(st.product, a.product);
      return l && p
        ? (await put("lineitem", l.lineitem_id, { product_number: p.product_number })).status
        : undefined;
    }
    case "deleteLine": {
      const l = pick(st.lineitem, a.line);
      return l
        ? (await api.delete(key, `${href("lineitem", l.lineitem_id)}?checksum=override`)).status
        : undefined;
    }
    case "insertOrder": {
      const c = pick(st.customer, a.customer)!;
      return (await api.post(key, "purchaseorder", { customer_name: c.name, paid: a.paid })).status;
    }
    case "orderWithLines": {
      const c = pick(st.customer, a.customer)!;
      const p = pick(st.product, a.product)!;
      return (
        await api.post(key, "purchaseorder", {
          customer_name: c.name,
          lineitems: [
            { product_number: p.product_number, qty_ordered: a.qty },
            { product_number: p.product_number, qty_ordered: 1 },
          ],
        })
      ).status;
    }
    case "moveOrder": {
      const o = pick(st.purchaseorder, a.order);
      const c = pick(st.customer, a.customer)!;
      return o ? (await put("purchaseorder", o.order_number, { customer_name: c.name })).status : undefined;
    }
    case "pay": {
      const o = pick(st.purchaseorder, a.order);
      return o ? (await put("purchaseorder", o.order_number, { paid: a.paid })).status : undefined;
    }
    case "deleteOrder": {
      const o = pick(st.purchaseorder, a.order);
      return o
        ? (await api.delete(key, `${href("purchaseorder", o.order_number)}?checksum=override`)).status
        : undefined;
    }
    case "creditLimit": {
      const c = pick(st.customer, a.customer)!;
      return (await put("customer", c.name, { credit_limit: a.limit })).status;
    }
    case "price": {
      const p = pick(st.product, a.product)!;
      return (await put("product", p.product_number, { price: a.price })).status;
    }
  }
}

describe("logic: model-based test over the canonical example", function () {
  this.timeout(600_000);
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let run = 0;
  const stats = { steps: 0, accepted: 0, rejected: 0 };

  before(async () => {
    platform = await startPlatform();
  });
  after(async () => {
    console.log(
      `      ${run} runs, ${stats.steps} steps: ${stats.accepted} accepted, ${stats.rejected} rejected`,
    );
    await platform.close();
  });

  it("every aggregate equals a recount after each step; rejected steps change nothing", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 18 }), async (actions) => {
        const project = `shop${++run}`;
        const s = await setupProject(undefined, { platform, project });
        const api = projectClient(platform.baseUrl, "acme", project);
        await api.post(s.key, "customer", [
          { name: "Ann", credit_limit: 60 },
          { name: "Bob", credit_limit: 250 },
        ]);
        await api.post(s.key, "product", [
          { name: "Bolt", price: 2.5 },
          { name: "Nut", price: 0.1 },
          { name: "Gear", price: 12.2 },
        ]);
        const seeded = await api.post(s.key, "purchaseorder", [
          { customer_name: "Ann", lineitems: [{ product_number: 1, qty_ordered: 2 }] },
          {
            customer_name: "Bob",
            lineitems: [
              { product_number: 3, qty_ordered: 1 },
              { product_number: 2, qty_ordered: 5 },
            ],
          },
        ]);
        expect(seeded.status, JSON.stringify(seeded.body)).to.equal(201);
        let state = await readState(api, s.key);
        expect(recountProblems(state)).to.deep.equal([]);
        for (const a of actions) {
          const status = await perform(api, s.key, state, a);
          if (status === undefined) continue;
          stats.steps++;
          const after = await readState(api, s.key);
          if (status >= 400) {
            stats.rejected++;
            expect(status, JSON.stringify(a)).to.be.oneOf([400, 409]);
            expect(after, `rejected ${JSON.stringify(a)} changed something`).to.deep.equal(state);
          } else {
            stats.accepted++;
            expect(recountProblems(after), `after ${JSON.stringify(a)}`).to.deep.equal([]);
          }
          state = after;
        }
        await s.admin.send("DELETE", `/accounts/acme/projects/${project}`);
      }),
      { numRuns: Number(process.env.LOGIC_MODEL_RUNS ?? 25), endOnFailure: !process.env.LOGIC_MODEL_SHRINK },
    );
  });
});
