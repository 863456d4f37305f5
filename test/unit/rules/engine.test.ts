/**
 * The engine on an in-memory store (no database): what one request costs in
 * sandbox calls, and the order things happen in. The sandbox is the real one.
 */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject, type ProjectModel } from "../../../services/data/src/domain/model/project-model.ts";
import { newChecksum, WritePlan } from "../../../services/data/src/domain/write/write-plan.ts";
import { LogicEngine, sandboxRuntime } from "../../../services/data/src/rules/index.ts";
import { IsolatePool } from "../../../services/data/src/sandbox/index.ts";
import type { RowDocument, TenantRows } from "../../../services/data/src/store/tenant-rows.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";
import { canonicalProject } from "../../integration/rules/support.ts";

type Doc = RowDocument & Record<string, unknown>;

/** The tenant-rows port in memory: get by _id, find by equality, sequences; counts reads. */
function memoryStore(tables: Record<string, Doc[]>): { store: TenantRows; reads: () => number } {
  let reads = 0;
  const matches = (doc: Doc, query: Record<string, unknown>) =>
    Object.entries(query).every(([k, v]) => {
      if (v !== null && typeof v === "object" && "$in" in v)
        return (v as { $in: unknown[] }).$in.includes(doc[k]);
      const want = v !== null && typeof v === "object" && "$eq" in v ? (v as { $eq: unknown }).$eq : v;
      return doc[k] === want;
    });
  const find = async (_storage: unknown, table: string, q: Record<string, unknown>) => {
    reads++;
    return (tables[table] ?? []).filter((d) => matches(d, q));
  };
  const sequences = new Map<string, number>();
  const store: TenantRows = {
    get: async (_storage, table, id) => (await find(_storage, table, { _id: id }))[0] ?? null,
    find,
    exists: async (_storage, table, q) => (await find(_storage, table, q)).length > 0,
    nextSequence: async (_storage, table) => {
      const n = (sequences.get(table) ?? 100) + 1;
      sequences.set(table, n);
      return n;
    },
  };
  return { store, reads: () => reads };
}

/** `revision`: another definition of the same project (the rule program is cached by revision). */
function model(definition: unknown, revision = testIdentity.revision): ProjectModel {
  const parsed = parseProjectDefinition(definition);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const compiled = compileProject({ ...testIdentity, revision }, parsed.definition);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return compiled.model;
}

const doc = (fields: Record<string, unknown>, id: unknown): Doc =>
  ({ ...fields, _id: id, _ck: newChecksum() }) as Doc;

describe("logic: the engine on an in-memory plan", () => {
  let pool: IsolatePool;
  let engine: LogicEngine;
  const project = model(canonicalProject());
  const version = project.versions.get("v1")!;
  const table = (name: string) => project.tables.get(name)!;

  before(() => {
    pool = new IsolatePool({ allowLoopbackFetch: false, timeoutMs: 2000 });
    engine = new LogicEngine(sandboxRuntime(pool));
  });
  after(() => pool.close());

  function seed() {
    return memoryStore({
      customer: [
        doc(
          { name: "Alpha", balance: 30, credit_limit: 10000, unpaid_orders: 1, biggest_order: 30 },
          "Alpha",
        ),
      ],
      product: [doc({ product_number: 1, name: "W", price: 10, quantity_ordered: 3 }, 1)],
      purchaseorder: [
        doc(
          {
            order_number: 7,
            customer_name: "Alpha",
            amount_total: 30,
            item_count: 1,
            smallest_item: 30,
            paid: false,
          },
          7,
        ),
      ],
      lineitem: [
        doc(
          {
            lineitem_id: 1,
            order_number: 7,
            product_number: 1,
            qty_ordered: 3,
            product_price: 10,
            amount: 30,
          },
          1,
        ),
      ],
    });
  }

  it("a line-item insert: two sandbox calls (the rows' logic, then validations and events), each parent read once", async () => {
    const { store, reads } = seed();
    const plan = new WritePlan(store, project);
    const line = doc({ lineitem_id: 2, order_number: 7, product_number: 1, qty_ordered: 2, amount: 0 }, 2);
    plan.insert(version.resources.get("lineitem")!, line);
    const stats = await engine.apply(plan, {
      principal: { roles: [] } as never,
      resource: version.resources.get("lineitem")!,
      version,
    });
    expect(stats.sandboxCalls).to.equal(2);
    expect(reads()).to.equal(3); // order, product, customer
    const final = Object.fromEntries(plan.changes.map((c) => [c.table.name, c.after]));
    expect(final.lineitem).to.include({ product_price: 10, amount: 20 });
    expect(final.purchaseorder).to.include({ amount_total: 50, item_count: 2, smallest_item: 20 });
    expect(final.customer).to.include({ balance: 50, biggest_order: 50 });
    expect(final.product).to.include({ quantity_ordered: 5 });
  });

  it("many rows in one request still make one sandbox call per round", async () => {
    const { store } = seed();
    const plan = new WritePlan(store, project);
    for (let i = 0; i < 200; i++) {
      plan.insert(
        version.resources.get("lineitem")!,
        doc(
          { lineitem_id: 10 + i, order_number: 7, product_number: 1, qty_ordered: 1 + (i % 3), amount: 0 },
          10 + i,
        ),
      );
    }
    const stats = await engine.apply(plan, {
      principal: { roles: [] } as never,
      resource: version.resources.get("lineitem")!,
      version,
    });
    expect(stats.sandboxCalls).to.be.at.most(3);
    const order = plan.planned(table("purchaseorder"), 7)!.after!;
    expect(order.item_count).to.equal(201);
    expect(order.amount_total).to.equal(
      30 + Array.from({ length: 200 }, (_, i) => 10 * (1 + (i % 3))).reduce((a, b) => a + b),
    );
  });

  it("parents and grand-parents of many rows are read level by level: one query per table and level", async () => {
    const def = canonicalProject();
    def.tables.lineitem.columns.limit_share = { type: "number" };
    def.rules.push({
      table: "lineitem",
      type: "formula",
      column: "limit_share",
      expression: "row.amount / row.order.customer.credit_limit",
    });
    const deep = model(def, testIdentity.revision + 1);
    const customers = ["A", "B", "C"].map((name) =>
      // biggest_order: another order's, so that the max is not rescanned when this one shrinks
      doc({ name, balance: 10, credit_limit: 1000, unpaid_orders: 1, biggest_order: 100 }, name),
    );
    const orders = customers.map((c, i) =>
      doc(
        {
          order_number: i + 1,
          customer_name: c.name,
          amount_total: 10,
          item_count: 1,
          smallest_item: 10,
          paid: false,
        },
        i + 1,
      ),
    );
    const lines = orders.map((o, i) =>
      doc(
        {
          lineitem_id: i + 1,
          order_number: o.order_number,
          product_number: 1,
          qty_ordered: 2,
          product_price: 5,
          amount: 10,
        },
        i + 1,
      ),
    );
    const { store, reads } = memoryStore({
      customer: customers,
      purchaseorder: orders,
      lineitem: lines,
      product: [doc({ product_number: 1, name: "W", price: 5, quantity_ordered: 6 }, 1)],
    });
    const plan = new WritePlan(store, deep);
    const resource = deep.versions.get("v1")!.resources.get("lineitem")!;
    for (const line of lines)
      plan.update(resource, line, { ...line, qty_ordered: 1, _ck: newChecksum() } as Doc);
    await engine.apply(plan, {
      principal: { roles: [] } as never,
      resource,
      version: deep.versions.get("v1")!,
    });
    expect(reads()).to.equal(3); // the orders, the product, the customers
    const after = plan.changesOf(deep.tables.get("lineitem")!).map((c) => c.after!);
    expect(after.map((l) => [l.amount, l.limit_share])).to.deep.equal([
      [5, 0.005],
      [5, 0.005],
      [5, 0.005],
    ]);
  });

  it("an update that touches no rule input runs no rule", async () => {
    const { store } = seed();
    const plan = new WritePlan(store, project);
    const before = (await plan.current(table("purchaseorder"), 7))!;
    plan.update(version.resources.get("purchaseorder")!, before, {
      ...before,
      notes: "x",
      _ck: newChecksum(),
    } as Doc);
    const stats = await engine.apply(plan, {
      principal: { roles: [] } as never,
      resource: version.resources.get("purchaseorder")!,
      version,
    });
    expect(stats.sandboxCalls).to.equal(1); // the order's commit validation
    expect(plan.changes.map((c) => c.table.name)).to.deep.equal(["purchaseorder"]);
  });
});
