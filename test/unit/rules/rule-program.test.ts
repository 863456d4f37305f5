/**
 * The rule program in a real sandbox, without an engine: libraries next to the
 * rules, and `logicContext.insert` answering rows handed back when an event
 * runs again.
 */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject } from "../../../services/data/src/domain/model/project-model.ts";
import {
  ENTRY,
  programSource,
  type SettleTask,
  type TaskResult,
} from "../../../services/data/src/rules/program.ts";
import { ruleProgramSources } from "../../../services/data/src/rules/rule-libraries.ts";
import { IsolatePool } from "../../../services/data/src/sandbox/index.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";
import { canonicalProject } from "../../integration/rules/support.ts";

const EVENT = `
const p = logicContext.insert('payment', {order_number: row.order_number, amount: row.amount_total});
if (typeof p === 'object') logicContext.insert('payment', {order_number: row.order_number, amount: p.payment_id});
`;

function program(libraries: Record<string, { code: string }> = {}) {
  const def = canonicalProject();
  def.rules = def.rules.filter((r: { type: string }) => r.type !== "event");
  def.rules.push({ name: "pay", table: "purchaseorder", type: "event", code: EVENT });
  def.rules.push({
    name: "library",
    table: "customer",
    type: "validation",
    expression: "withinLimit(row.balance, row.credit_limit)",
  });
  def.libraries = libraries;
  const parsed = parseProjectDefinition(def);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const compiled = compileProject(testIdentity, parsed.definition);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return ruleProgramSources("rules-test", programSource(compiled.model.logic), libraries);
}

const order = {
  order_number: 7,
  customer_name: "A",
  amount_total: 30,
  item_count: 1,
  smallest_item: 30,
  paid: true,
  notes: null,
};

function settle(given?: SettleTask["given"]): SettleTask {
  return {
    t: "settle",
    table: "purchaseorder",
    row: { ...order },
    oldRow: null,
    verb: "UPDATE",
    initialVerb: "UPDATE",
    deleted: false,
    phase: "row",
    given,
  };
}

describe("rules: the rule program in the sandbox", () => {
  let pool: IsolatePool;
  before(() => {
    pool = new IsolatePool({ allowLoopbackFetch: false, timeoutMs: 2000 });
  });
  after(() => pool.close());

  const run = async (sources: ReturnType<typeof program>, tasks: SettleTask[]) =>
    (await pool.program("rules-test", sources).call(ENTRY, [{ tasks }])) as TaskResult<SettleTask>[];
  /** `run` where no task may fail with an error. */
  const settled = async (sources: ReturnType<typeof program>, tasks: SettleTask[]) =>
    (await run(sources, tasks)).map((result) => {
      if (result.error) expect.fail(`the task failed: ${result.error.message}`);
      return result;
    });

  it("an event that reads an inserted row stops there, and completes once the row is handed back", async () => {
    const sources = program({ limits: { code: "function withinLimit(b, l) { return b <= l; }" } });
    const [first] = await settled(sources, [settle()]);
    expect(first!.incomplete).to.equal(true);
    expect(first!.inserts.map((i) => i.values)).to.deep.equal([{ order_number: 7, amount: 30 }]);
    const stored = { payment_id: 41, order_number: 7, customer_name: null, amount: 30 };
    const [second] = await settled(sources, [settle([{ table: "payment", row: stored }])]);
    expect(second!.incomplete).to.equal(undefined);
    expect(second!.inserts.map((i) => i.values)).to.deep.equal([{ order_number: 7, amount: 41 }]);
  });

  it("an insert into another table than in the run before fails the rule", async () => {
    const sources = program({ limits: { code: "function withinLimit(b, l) { return b <= l; }" } });
    const [result] = await run(sources, [settle([{ table: "customer", row: { name: "A" } }])]);
    expect(result!.error!.message).to.match(
      /^logicContext.insert was called for 'payment' where the previous run inserted into 'customer'/,
    );
  });

  it("rule code calls library functions; the dispatcher's names are not visible to either", async () => {
    const sources = program({
      limits: {
        code: "function withinLimit(b, l) { return typeof RULES === 'undefined' && typeof FNS === 'undefined' && b <= l; }",
      },
    });
    const customer = { name: "A", balance: 5, credit_limit: 10, unpaid_orders: 0, biggest_order: null };
    const task = { ...settle(), table: "customer", row: customer };
    const [ok] = await settled(sources, [task]);
    expect(ok!.failed).to.equal(undefined);
    const [failed] = await settled(sources, [{ ...task, row: { ...customer, balance: 50 } }]);
    expect(failed!.failed).to.be.a("number");
  });
});
