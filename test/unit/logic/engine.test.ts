/**
 * The engine on an in-memory store (no database): what one request costs in
 * sandbox calls, and the order things happen in. The sandbox is the real one.
 */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/project-definition.ts";
import { compileProject, type ProjectModel } from "../../../services/data/src/domain/project-model.ts";
import { newChecksum, WritePlan } from "../../../services/data/src/domain/write-plan.ts";
import { LogicEngine, sandboxRuntime } from "../../../services/data/src/logic/index.ts";
import { SandboxPool } from "../../../services/data/src/sandbox/index.ts";
import type { RowDocument, TenantStore } from "../../../services/data/src/store/tenant-store.ts";
import { canonicalProject } from "../../integration/logic/support.ts";

type Doc = RowDocument & Record<string, unknown>;

/** Just enough of TenantStore for WritePlan: findOne by _id, find by equality, sequences. */
function memoryStore(tables: Record<string, Doc[]>): { store: TenantStore; reads: () => number } {
  let reads = 0;
  const matches = (doc: Doc, query: Record<string, unknown>) =>
    Object.entries(query).every(([k, v]) => {
      const want = v !== null && typeof v === "object" && "$eq" in v ? (v as { $eq: unknown }).$eq : v;
      return doc[k] === want;
    });
  const sequences = new Map<string, number>();
  const store = {
    queryTimeoutMs: 1000,
    rows: (_a: string, _p: string, table: string) => ({
      findOne: async (q: Record<string, unknown>) => {
        reads++;
        return (tables[table] ?? []).find((d) => matches(d, q)) ?? null;
      },
      find: (q: Record<string, unknown>) => ({
        toArray: async () => {
          reads++;
          return (tables[table] ?? []).filter((d) => matches(d, q));
        },
      }),
    }),
    nextSequence: async (_a: string, _p: string, table: string) => {
      const n = (sequences.get(table) ?? 100) + 1;
      sequences.set(table, n);
      return n;
    },
  } as unknown as TenantStore;
  return { store, reads: () => reads };
}

function model(definition: unknown): ProjectModel {
  const parsed = parseProjectDefinition(definition);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const compiled = compileProject({ account: "a", name: "p", uid: "u", revision: 1 }, parsed.definition);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return compiled.model;
}

const doc = (fields: Record<string, unknown>, id: unknown): Doc =>
  ({ ...fields, _id: id, _ck: newChecksum() }) as Doc;

describe("logic: the engine on an in-memory plan", () => {
  let pool: SandboxPool;
  let engine: LogicEngine;
  const project = model(canonicalProject());
  const version = project.versions.get("v1")!;
  const table = (name: string) => project.tables.get(name)!;

  before(() => {
    pool = new SandboxPool({ allowLoopbackFetch: false, timeoutMs: 2000 });
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
