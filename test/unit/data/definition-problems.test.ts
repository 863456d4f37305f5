/**
 * One answer lists every problem of a definition: structural ones (the schema)
 * and semantic ones (cross-references, rules) together, each once, at its
 * path; parts that did not parse cause no follow-on problems.
 */
import { expect } from "chai";
import fc from "fast-check";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject } from "../../../services/data/src/domain/model/project-model.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";
import { canonicalProject } from "../../integration/rules/support.ts";

type Json = Record<string, unknown>;

/** Every path into a JSON value (objects' keys and arrays' indexes), the root first. */
function pathsInto(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  const children =
    typeof value === "object" && value !== null ? Object.entries(value as Json) : ([] as [string, unknown][]);
  return [
    path,
    ...children.flatMap(([key, child]) =>
      pathsInto(child, [...path, Array.isArray(value) ? Number(key) : key]),
    ),
  ];
}

function problemsOf(definition: unknown): string[] {
  const parsed = parseProjectDefinition(definition);
  if (!parsed.ok) return parsed.problems.map((p) => `${p.path}: ${p.message}`);
  const compiled = compileProject(testIdentity, parsed.definition);
  return compiled.ok ? [] : compiled.problems.map((p) => `${p.path}: ${p.message}`);
}

/** The paths of the problems; each problem must be listed once. */
function pathsOf(definition: unknown): string[] {
  const problems = problemsOf(definition);
  expect(new Set(problems).size, problems.join("\n")).to.equal(problems.length);
  return problems.map((p) => p.slice(0, p.indexOf(": "))).sort();
}

/** The demo project with order lines, a rating of customers, rules, and its own resources and roles; without problems. */
type Shop = Json & { tables: Json; rules: Json[]; apiVersions: Json; roles: Json };

function shop(): Shop {
  const def: Shop = {
    ...demoProject(),
    rules: [
      { table: "purchaseorder", type: "sum", column: "amount_total", children: "lineitems", of: "amount" },
      { table: "lineitem", type: "formula", column: "amount", expression: "row.qty * row.price" },
      {
        table: "customer",
        type: "validation",
        expression: "row.rating > 2 || row.balance <= row.credit_limit",
        message: "{name} is over the limit",
      },
    ],
    apiVersions: {
      v1: {
        resources: {
          Customers: {
            table: "customer",
            attributes: { Name: "name", Rating: "rating" },
            filter: "Rating > 2",
            subresources: { Orders: { table: "purchaseorder", via: "customer" } },
          },
        },
      },
    },
    roles: {
      Clerk: {
        tables: {
          customer: { access: ["read"], rowFilter: "rating > 2", columns: ["name", "rating"] },
          lineitem: { access: ["read", "insert"] },
        },
      },
    },
  };
  (def.tables.customer as { columns: Json }).columns.rating = { type: "integer" };
  def.tables.lineitem = {
    key: ["id"],
    columns: {
      id: { type: "integer", generated: true },
      order_number: { type: "integer", required: true },
      product_number: { type: "integer" },
      qty: { type: "integer", default: 1 },
      price: { type: "number", default: 0 },
      amount: { type: "number", default: 0 },
    },
    parents: {
      order: { table: "purchaseorder", columns: { order_number: "order_number" }, children: "lineitems" },
    },
  };
  return def;
}

describe("project definitions: every problem in one answer", () => {
  it("the shop has no problems", () => {
    expect(problemsOf(shop())).to.deep.equal([]);
  });

  it("a badly typed column is reported once; what names it is not reported again", () => {
    const def = shop();
    const customer = def.tables.customer as { columns: Json; key: string[] };
    customer.columns.rating = { type: "stars" };
    customer.columns.region = { type: "string", colour: "red" };
    def.rules.push({ table: "customer", type: "validation", expression: "row.regio != null" });
    expect(problemsOf(def)).to.deep.equal([
      "$.tables.customer.columns.region.colour: unknown field 'colour'",
      '$.tables.customer.columns.rating.type: Invalid option: expected one of "string"|"number"|"integer"|"boolean"|"date"|"datetime"|"json"',
      "$.rules[3].expression: 'regio' is not an attribute or parent role of 'customer'",
    ]);
  });

  it("tables: a table that does not parse is lost whole; the others are still checked", () => {
    const def = shop();
    def.tables.shipment = { key: "id", columns: { id: { type: "integer" } } };
    (def.tables.customer as Json).key = ["name", "nope"];
    def.rules.push({ table: "shipment", type: "formula", column: "x", expression: "row.a +" });
    (def.apiVersions.v1 as { resources: Json }).resources.Shipments = { table: "shipment" };
    (def.roles.Clerk as { tables: Json }).tables.shipment = { access: ["read"] };
    expect(pathsOf(def)).to.deep.equal([
      "$.rules[3].expression",
      "$.tables.customer.key[1]",
      "$.tables.shipment.key",
    ]);
    expect(problemsOf(def)).to.include(
      "$.rules[3].expression: does not parse: Unexpected token at line 1, column 8",
    );
  });

  it("relationships: a broken one and one to a missing table silence the rules and resources using them", () => {
    const def = shop();
    const lineitem = def.tables.lineitem as { parents: Json };
    (lineitem.parents.order as Json).children = 7;
    lineitem.parents.product = { table: "product", columns: { product_number: "product_number" } };
    def.rules.push({
      table: "lineitem",
      type: "formula",
      column: "price",
      expression: "row.product.price * 2",
    });
    (def.apiVersions.v1 as { resources: Json }).resources.Lines = {
      table: "purchaseorder",
      subresources: { Items: { table: "lineitem", via: "order" } },
    };
    expect(problemsOf(def)).to.deep.equal([
      "$.tables.lineitem.parents.order.children: Invalid input: expected string, received number",
      "$.tables.lineitem.parents.product.table: no table 'product'",
    ]);
  });

  it("resources: structural and semantic problems of resources and subresources", () => {
    const def = shop();
    const resources = (def.apiVersions.v1 as { resources: Json }).resources as Json;
    (resources.Customers as { subresources: Json }).subresources.Orders = {
      table: "purchaseorder",
      via: "customer",
      order: 5,
    };
    resources.Nowhere = { table: "warehouse" };
    resources.Lines = { table: "lineitem", via: "order", attributes: { Id: "id", Qty: "qtty" } };
    expect(problemsOf(def)).to.deep.equal([
      "$.apiVersions.v1.resources.Customers.subresources.Orders.order: Invalid input: expected string, received number",
      "$.apiVersions.v1.resources.Lines.via: unknown field 'via'",
      "$.apiVersions.v1.resources.Nowhere.table: no table 'warehouse'",
      "$.apiVersions.v1.resources.Lines.attributes.Qty: 'qtty' is not a column of 'lineitem'",
    ]);
  });

  it("roles: a broken grant is lost; filters naming lost columns are still checked to parse", () => {
    const def = shop();
    (def.tables.customer as { columns: Json }).columns.rating = { type: "stars" };
    const clerk = def.roles.Clerk as { tables: Json };
    clerk.tables.purchaseorder = { access: ["read", "fly"] };
    clerk.tables.warehouse = { access: ["read"] };
    clerk.tables.lineitem = { access: ["read"], rowFilter: "qty = = 1", columns: ["id", "ghost"] };
    def.roles.Auditor = { tables: { customer: { access: ["read"], rowFilter: "rating >" } } };
    expect(pathsOf(def)).to.deep.equal([
      "$.roles.Auditor.tables.customer.rowFilter",
      "$.roles.Clerk.tables.lineitem.columns[1]",
      "$.roles.Clerk.tables.lineitem.rowFilter",
      "$.roles.Clerk.tables.purchaseorder.access[1]",
      "$.roles.Clerk.tables.warehouse",
      "$.tables.customer.columns.rating.type",
    ]);
  });

  it("rules: structural problems of some rules and semantic ones of others, at the rules' own indexes", () => {
    const def = shop();
    def.rules.push(
      { table: "customer", type: "sums", column: "balance" },
      { table: "customer", type: "formula", column: "credit_limit" },
      { table: "customer", type: "validation", expression: "row.regio != null", column: "region" },
      { table: "purchaseorder", type: "validation", expression: "row.amount_totl > 0" },
      { table: "customer", type: "count", column: "balance", children: "orders", of: "amount_total" },
      { table: "lineitem", type: "event", code: "if (x {" },
      { type: "event", code: "row.x = 1" },
    );
    expect(problemsOf(def)).to.deep.equal([
      "$.rules[3].type: Invalid discriminator value. Expected 'sum' | 'count' | 'min' | 'max' | 'formula' | 'parentCopy' | 'validation' | 'commitValidation' | 'earlyEvent' | 'event' | 'commitEvent' | 'managedParent'",
      "$.rules[4].expression: required",
      "$.rules[5].column: a validation rule has no 'column'",
      "$.rules[7].of: a count rule has no 'of'",
      "$.rules[9].table: required",
      "$.rules[5].expression: 'regio' is not an attribute or parent role of 'customer'",
      "$.rules[6].expression: 'amount_totl' is not an attribute or parent role of 'purchaseorder'",
      "$.rules[8].code: does not parse: Unexpected token at line 1, column 7",
    ]);
  });

  it("a definition mixing problems of every part lists each of them once", () => {
    const def = shop();
    const customer = def.tables.customer as { columns: Json };
    customer.columns.rating = { type: "stars" };
    ((def.tables.lineitem as { parents: Json }).parents.order as Json).children = 7;
    (def.tables.purchaseorder as { parents: Json }).parents.warehouse = {
      table: "warehouse",
      columns: { customer_name: "name" },
    };
    def.rules.push(
      { table: "purchaseorder", type: "validation", expression: "row.warehouse.name != null" },
      { table: "customer", type: "validation", expression: "row.balance >", message: "{rating}" },
    );
    const resources = (def.apiVersions.v1 as { resources: Json }).resources as Json;
    resources.Stock = { table: "warehouse" };
    resources.Lines = { table: "lineitem", attributes: { Qty: "qty" } };
    def.roles.Auditor = {
      tables: { "*": { access: ["audit"] }, customer: { access: ["read"], columns: ["rating"] } },
    };
    expect(problemsOf(def)).to.deep.equal([
      '$.tables.customer.columns.rating.type: Invalid option: expected one of "string"|"number"|"integer"|"boolean"|"date"|"datetime"|"json"',
      "$.tables.lineitem.parents.order.children: Invalid input: expected string, received number",
      '$.roles.Auditor.tables["*"].access[0]: Invalid option: expected one of "read"|"insert"|"update"|"delete"',
      "$.tables.purchaseorder.parents.warehouse.table: no table 'warehouse'",
      "$.apiVersions.v1.resources.Stock.table: no table 'warehouse'",
      "$.apiVersions.v1.resources.Lines.attributes: must include the key column 'id' of 'lineitem'",
      "$.roles.Auditor.tables.customer.columns: must include the key column 'name'",
      "$.rules[4].expression: does not parse: Unexpected token at line 1, column 14",
    ]);
  });

  it("any damage to a definition gives problems, each once, and never an exception", () => {
    const paths = pathsInto(canonicalProject()).filter((p) => p.length > 0);
    const damage = fc.record({
      at: fc.nat({ max: paths.length - 1 }),
      value: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(damage, { minLength: 1, maxLength: 4 }), (damages) => {
        const def = canonicalProject();
        for (const { at, value } of damages) {
          const path = paths[at] ?? [];
          const holder = path.slice(0, -1).reduce<unknown>((v, k) => (v as Json | undefined)?.[k], def);
          if (typeof holder !== "object" || holder === null) continue;
          const key = path[path.length - 1] as string;
          if (value === undefined) delete (holder as Json)[key];
          else (holder as Json)[key] = value;
        }
        const problems = problemsOf(def);
        expect(new Set(problems).size, problems.join("\n")).to.equal(problems.length);
      }),
      { numRuns: 300 },
    );
  });

  it("a definition that is not an object, or lacks its sections, is one problem each", () => {
    expect(problemsOf([])).to.deep.equal(["$: Invalid input: expected object, received array"]);
    expect(
      problemsOf({ rules: [{ table: "customer", type: "validation", expression: "row.x" }] }),
    ).to.deep.equal(["$.tables: required", "$.apiVersions: required"]);
  });
});
