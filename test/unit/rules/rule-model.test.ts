import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject } from "../../../services/data/src/domain/model/project-model.ts";
import { compileLogic } from "../../../services/data/src/domain/model/rule-model.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";
import { canonicalProject, type Row } from "../../integration/rules/support.ts";

function model(definition: unknown) {
  const parsed = parseProjectDefinition(definition);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const compiled = compileProject(testIdentity, parsed.definition);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return compiled.model;
}

/** The rules of a definition compiled over its tables (which must be without problems). */
function compile(definition: Row) {
  const parsed = parseProjectDefinition(definition);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return compileLogic(model({ ...definition, rules: [] }).tables, parsed.definition.rules);
}

function withRules(rules: unknown[]) {
  return { ...canonicalProject(), rules };
}

describe("logic: compiling the rules of a definition", () => {
  it("compiles the canonical example without problems", () => {
    const { logic, problems } = compile(canonicalProject());
    expect(problems).to.deep.equal([]);
    const lineitem = logic.tables.get("lineitem")!;
    expect(lineitem.formulas.map((f) => f.column)).to.deep.equal(["amount"]);
    expect([...lineitem.formulas[0]!.deps].sort()).to.deep.equal(["product_price", "qty_ordered"]);
    expect(lineitem.feeds.map((r) => r.name).sort()).to.deep.equal([
      "item count",
      "order total",
      "quantity ordered",
      "smallest item",
    ]);
    expect([...lineitem.passRoles]).to.deep.equal(["product"]);
    expect([...logic.tables.get("customer")!.derived.keys()].sort()).to.deep.equal([
      "balance",
      "biggest_order",
      "unpaid_orders",
    ]);
  });

  it("orders formulas by what they read", () => {
    const def = canonicalProject();
    def.tables.lineitem.columns.discounted = { type: "number" };
    def.tables.lineitem.columns.tax = { type: "number" };
    def.rules.push(
      { table: "lineitem", type: "formula", column: "tax", expression: "row.discounted * 0.2" },
      { table: "lineitem", type: "formula", column: "discounted", expression: "row.amount * 0.9" },
    );
    const { logic, problems } = compile(def);
    expect(problems).to.deep.equal([]);
    expect(logic.tables.get("lineitem")!.formulas.map((f) => f.column)).to.deep.equal([
      "amount",
      "discounted",
      "tax",
    ]);
  });

  it("records which parent changes cascade to children's formulas", () => {
    const def = canonicalProject();
    def.tables.lineitem.columns.list_price = { type: "number" };
    def.rules.push({
      table: "lineitem",
      type: "formula",
      column: "list_price",
      expression: "row.product.price * row.qty_ordered",
    });
    const { logic } = compile(def);
    const cascades = logic.tables.get("product")!.cascades;
    expect(cascades.map((c) => [c.rel.childTable, [...c.columns]])).to.deep.equal([["lineitem", ["price"]]]);
  });

  it("rejects a cycle through aggregates and formulas, naming it", () => {
    const def = canonicalProject();
    def.tables.purchaseorder.columns.discount = { type: "number" };
    def.rules.push(
      {
        table: "purchaseorder",
        type: "formula",
        column: "discount",
        expression: "row.amount_total > 100 ? 0.1 : 0",
      },
      {
        table: "lineitem",
        type: "formula",
        column: "product_price",
        expression: "row.product.price * (1 - row.order.discount)",
      },
    );
    def.rules = def.rules.filter((r: Row) => r.type !== "parentCopy");
    const { problems } = compile(def);
    expect(problems).to.have.length.greaterThan(0);
    expect(problems[0]!.message).to.match(
      /rules form a cycle: .*purchaseorder\.amount_total.*purchaseorder\.discount.*lineitem\.product_price.*lineitem\.amount/,
    );
    expect(problems[0]!.path).to.match(/^\$\.rules\[\d+\]$/);
  });

  it("rejects a formula that reads its own column", () => {
    const { problems } = compile(
      withRules([{ table: "lineitem", type: "formula", column: "amount", expression: "row.amount + 1" }]),
    );
    expect(problems.map((p) => p.message)).to.deep.equal([
      "the formula for 'amount' reads its own value (use oldRow)",
    ]);
  });

  it("reports syntax errors, unknown attributes and bad where clauses with their paths", () => {
    const { problems } = compile(
      withRules([
        { table: "lineitem", type: "formula", column: "amount", expression: "row.qty_ordered * " },
        { table: "lineitem", type: "validation", expression: "row.qty_orderd > 0" },
        { table: "lineitem", type: "validation", expression: "row.product.prize > 0" },
        {
          table: "purchaseorder",
          type: "sum",
          column: "amount_total",
          children: "lineitems",
          of: "amount",
          where: "row.product.price > 1",
        },
        { table: "customer", type: "validation", expression: "true", message: "bad {nope}" },
        { table: "lineitem", type: "event", code: "if (x {" },
      ]),
    );
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p.message]));
    expect(byPath["$.rules[0].expression"]).to.match(/^does not parse: /);
    expect(byPath["$.rules[1].expression"]).to.equal(
      "'qty_orderd' is not an attribute or parent role of 'lineitem'",
    );
    expect(byPath["$.rules[2].expression"]).to.equal(
      "'prize' is not an attribute of 'product' (read as 'product.prize')",
    );
    expect(byPath["$.rules[3].where"]).to.equal(
      "a where clause can only read the child's own attributes, not 'product'",
    );
    expect(byPath["$.rules[4].message"]).to.equal("'{nope}' is not an attribute of 'customer'");
    expect(byPath["$.rules[5].code"]).to.match(/^does not parse: /);
  });

  it("reports reads of oldRow that are not the row's own attributes", () => {
    const { problems } = compile(
      withRules([
        { table: "lineitem", type: "event", code: "if (oldRow && oldRow.qty_orderd > 1) log();" },
        { table: "lineitem", type: "validation", expression: "!oldRow || oldRow.product.price > 0" },
        { table: "lineitem", type: "validation", expression: "!oldRow || oldRow['qty_ordered'] > 0" },
      ]),
    );
    expect(problems.map((p) => `${p.path}: ${p.message}`)).to.deep.equal([
      "$.rules[0].code: 'qty_orderd' is not an attribute of 'lineitem' (read as 'oldRow.qty_orderd')",
      "$.rules[1].expression: 'oldRow.product': oldRow holds the row's own attributes only, not its parents",
    ]);
  });

  it("accepts a function body with return as an expression", () => {
    const { problems, logic } = compile(
      withRules([
        {
          table: "lineitem",
          type: "formula",
          column: "amount",
          expression: "const q = row.qty_ordered; return q * 2;",
        },
      ]),
    );
    expect(problems).to.deep.equal([]);
    expect(logic.functions[0]!.body).to.equal("const q = row.qty_ordered; return q * 2;");
  });

  it("rejects a column derived twice and derived key columns", () => {
    const { problems } = compile(
      withRules([
        { table: "lineitem", type: "formula", column: "amount", expression: "1" },
        { table: "lineitem", type: "formula", column: "amount", expression: "2" },
        { table: "lineitem", type: "formula", column: "lineitem_id", expression: "3" },
      ]),
    );
    expect(problems.map((p) => p.message)).to.include.members([
      "'lineitem.amount' is already derived by another rule",
      "key column 'lineitem_id' cannot be derived",
    ]);
  });

  it("checks aggregate column types", () => {
    const { problems } = compile(
      withRules([
        { table: "customer", type: "sum", column: "name", children: "orders", of: "amount_total" },
        { table: "customer", type: "sum", column: "balance", children: "orders", of: "paid" },
        { table: "purchaseorder", type: "sum", column: "item_count", children: "lineitems", of: "amount" },
      ]),
    );
    expect(problems.map((p) => `${p.path}: ${p.message}`)).to.deep.equal([
      "$.rules[0].column: the sum of a number column needs a number column here",
      "$.rules[0].column: key column 'name' cannot be derived",
      "$.rules[1].of: a sum needs a number or integer child column",
      "$.rules[2].column: the sum of a number column needs a number column here",
    ]);
  });
});
