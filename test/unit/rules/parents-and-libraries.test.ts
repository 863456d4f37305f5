/** Parents more than one level up and project libraries, as the rule compiler sees them. */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { depTarget, readChain, roleTree } from "../../../services/data/src/domain/model/parent-paths.ts";
import { compileProject } from "../../../services/data/src/domain/model/project-model.ts";
import { parseRuleCode } from "../../../services/data/src/domain/model/rule-code.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";
import { canonicalProject, type Row } from "../../integration/rules/support.ts";

function compiled(definition: Row) {
  const parsed = parseProjectDefinition(definition);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return compileProject(testIdentity, parsed.definition);
}

function model(definition: Row) {
  const result = compiled(definition);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.model;
}

function chains(src: string): string[][] {
  const result = parseRuleCode(src, "code");
  if (!result.ok) throw new Error(result.error);
  return result.code.row.chains;
}

/** The canonical project with a formula on lineitem. */
function withLineFormula(expression: string): Row {
  const def = canonicalProject();
  def.tables.lineitem.columns.extra = { type: "string" };
  def.rules.push({ name: "extra", table: "lineitem", type: "formula", column: "extra", expression });
  return def;
}

describe("rules: chains of parent roles", () => {
  it("finds every member chain read from row", () => {
    expect(chains("row.order.customer.name + row['qty'] + row.order?.customer?.['balance']")).to.deep.equal([
      ["order", "customer", "name"],
      ["qty"],
      ["order", "customer", "balance"],
    ]);
    expect(chains("row.name.toUpperCase()")).to.deep.equal([["name", "toUpperCase"]]);
    expect(chains("row.a.b.c = 1; row.x = 2; row.p.q += 1")).to.deep.equal([["a"], ["x"], ["p", "q"]]);
  });

  it("resolves a chain through the tables: the column, the foreign keys on the way, the role paths", () => {
    const tables = model(canonicalProject()).tables;
    const lineitem = tables.get("lineitem")!;
    expect(readChain(tables, lineitem, ["order", "customer", "credit_limit"])).to.deep.equal({
      deps: ["order_number", "order.customer_name", "order.customer.credit_limit"],
      roles: ["order", "order.customer"],
    });
    const whole = readChain(tables, lineitem, ["order", "customer"]);
    expect(whole.deps).to.include.members(["order.customer.name", "order.customer.balance"]);
    expect(readChain(tables, lineitem, ["qty_ordered", "toFixed"]).deps).to.deep.equal(["qty_ordered"]);
    const unknown = readChain(tables, lineitem, ["order", "customer", "regio"]).unknown!;
    expect([unknown.name, unknown.table.name, unknown.path.join(".")]).to.deep.equal([
      "regio",
      "customer",
      "order.customer.regio",
    ]);
    const target = depTarget(tables, lineitem, "order.customer.credit_limit")!;
    expect(target.rels.map((r) => r.role)).to.deep.equal(["order", "customer"]);
    expect([target.table.name, target.column]).to.deep.equal(["customer", "credit_limit"]);
    expect(depTarget(tables, lineitem, "order.nothing")).to.equal(undefined);
  });

  it("builds a tree of role paths", () => {
    const tree = roleTree(["order", "order.customer", "product"]);
    expect([...tree.keys()]).to.deep.equal(["order", "product"]);
    expect([...tree.get("order")!.keys()]).to.deep.equal(["customer"]);
  });

  it("a formula reading a grand-parent: its dependencies, the parents its row needs, the cascades", () => {
    const logic = model(withLineFormula("row.order.customer.name + row.order.paid")).logic;
    const lineitem = logic.tables.get("lineitem")!;
    const extra = lineitem.formulas.find((f) => f.column === "extra")!;
    expect([...extra.deps].sort()).to.deep.equal([
      "order.customer.name",
      "order.customer_name",
      "order.paid",
      "order_number",
    ]);
    expect([...lineitem.passRoles].sort()).to.deep.equal(["order", "order.customer", "product"]);
    const customer = logic.tables.get("customer")!;
    expect(
      customer.deepCascades.map((c) => [c.prefix, c.rels.map((r) => r.childTable), [...c.columns]]),
    ).to.deep.equal([["order.customer", ["purchaseorder", "lineitem"], ["name"]]]);
    const order = logic.tables.get("purchaseorder")!;
    expect(order.cascades.map((c) => [c.rel.childTable, [...c.columns].sort()])).to.deep.equal([
      ["lineitem", ["customer_name", "paid"]],
    ]);
  });

  it("parentCopy copies from a grand-parent, chosen by the row's own foreign key", () => {
    const def = withLineFormula("'x'");
    def.tables.lineitem.columns.limit = { type: "number" };
    def.rules.push({
      table: "lineitem",
      type: "parentCopy",
      column: "limit",
      parent: "order.customer",
      from: "credit_limit",
    });
    const lineitem = model(def).logic.tables.get("lineitem")!;
    const copy = lineitem.parentCopies.find((r) => r.column === "limit")!;
    expect([copy.rel!.role, copy.parentPath, copy.from]).to.deep.equal([
      "order",
      "order.customer",
      "credit_limit",
    ]);
    expect([...lineitem.passRoles]).to.include.members(["order", "order.customer"]);
    def.rules.at(-1).parent = "order.custmer";
    const bad = compiled(def);
    expect(bad.ok ? [] : bad.problems.map((p) => p.message)).to.deep.equal([
      "'custmer' is not a parent role of 'purchaseorder'",
    ]);
    def.rules.at(-1).parent = "order..customer";
    expect(() => compiled(def)).to.throw(/must be a parent role, or up to 8 roles joined by '\.'/);
  });

  it("validations and events get the role paths they read", () => {
    const def = canonicalProject();
    def.rules.push({ table: "lineitem", type: "validation", expression: "row.order.customer.balance >= 0" });
    const lineitem = model(def).logic.tables.get("lineitem")!;
    expect([...lineitem.settleRoles].sort()).to.deep.equal(["order", "order.customer"]);
  });

  it("rejects a cycle through a grand-parent and an unknown attribute read through one", () => {
    const cyclic = compiled(withLineFormula("row.order.customer.balance"));
    expect(cyclic.ok).to.equal(true); // a string formula feeds nothing
    const def = canonicalProject();
    const amount = def.rules.find((r: Row) => r.name === "line amount");
    amount.expression = "row.qty_ordered * row.product_price + row.order.customer.balance * 0";
    const result = compiled(def);
    expect(result.ok).to.equal(false);
    if (!result.ok) expect(result.problems.map((p) => p.message).join("\n")).to.match(/rules form a cycle: /);
    const unknown = compiled(withLineFormula("row.order.customer.regio"));
    expect(unknown.ok ? [] : unknown.problems).to.deep.equal([
      {
        path: `$.rules[${canonicalProject().rules.length}].expression`,
        message: "'regio' is not an attribute of 'customer' (read as 'order.customer.regio')",
      },
    ]);
  });
});

describe("rules: project libraries", () => {
  it("must parse when the project has rules, and are not checked when it has none", () => {
    const def = canonicalProject();
    def.libraries = { good: { code: "function f() { return 1; }" }, bad: { code: "function (" } };
    const result = compiled(def);
    expect(result.ok ? [] : result.problems.map((p) => p.path)).to.deep.equal(["$.libraries.bad.code"]);
    expect(compiled({ ...def, rules: [] }).ok).to.equal(true);
  });
});
