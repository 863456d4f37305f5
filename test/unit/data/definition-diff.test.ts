import { createHash } from "node:crypto";
import { expect } from "chai";
import { diffDefinitions } from "../../../services/data/src/domain/admin/definition-diff.ts";
import type { ProjectDefinition } from "../../../services/data/src/domain/definition/project-definition.ts";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { canonicalProject, type Row } from "../../integration/rules/support.ts";

function parsed(definition: unknown): ProjectDefinition {
  const result = parseProjectDefinition(definition);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.definition;
}

/** The diff from `before` to what `change` makes of a copy of it. */
function diffAfter(before: Row, change: (after: Row) => void) {
  const after = structuredClone(before);
  change(after);
  return diffDefinitions(parsed(before), parsed(after));
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("definition diff", () => {
  it("finds nothing between a definition and itself", () => {
    expect(diffDefinitions(parsed(canonicalProject()), parsed(canonicalProject()))).to.deep.equal({
      summary: "no changes",
    });
  });

  it("tables: added, removed, and within a changed table its key, columns and relationships", () => {
    const diff = diffAfter(canonicalProject(), (d) => {
      d.tables.shipment = { key: ["id"], columns: { id: { type: "integer", generated: true } } };
      delete d.tables.payment;
      d.rules = d.rules.filter((r: Row) => r.type !== "event");
      const customer = d.tables.customer;
      customer.columns.credit_limit = { type: "integer", default: 500 };
      customer.columns.region = { type: "string", maxLength: 20 };
      delete customer.columns.biggest_order;
      d.rules = d.rules.filter((r: Row) => r.column !== "biggest_order");
      d.tables.lineitem.parents.order.children = "items";
      d.tables.lineitem.parents.order.columns = { order_number: "order_number" };
      d.tables.product.key = ["product_number", "name"];
    });
    expect(diff.tables).to.deep.equal({
      added: ["shipment"],
      removed: ["payment"],
      changed: {
        customer: {
          columns: {
            added: ["region"],
            removed: ["biggest_order"],
            changed: {
              credit_limit: {
                type: { before: "number", after: "integer" },
                default: { before: 0, after: 500 },
              },
            },
          },
        },
        product: {
          key: { before: ["product_number"], after: ["product_number", "name"] },
          indexes: {
            changed: { key: { columns: { before: ["product_number"], after: ["product_number", "name"] } } },
          },
        },
        lineitem: { parents: { changed: { order: { children: { before: "lineitems", after: "items" } } } } },
      },
    });
    expect(diff.summary).to.equal("tables +1 ~3 -1, rules -2");
  });

  it("roles: per table access, row filter and columns; added and removed roles and grants", () => {
    const diff = diffAfter(demoProject(), (d) => {
      const reader = d.roles["Region reader"];
      reader.tables.customer.access = ["read", "update"];
      reader.tables.customer.rowFilter = "region = @{region} and balance > 0";
      delete reader.tables.customer.columns;
      reader.tables.purchaseorder = { access: ["read"] };
      reader.description = "reads one region";
      delete d.roles["No delete"];
      d.roles.Auditor = { tables: { "*": { access: ["read"] } } };
    });
    expect(diff.roles).to.deep.equal({
      added: ["Auditor"],
      removed: ["No delete"],
      changed: {
        "Region reader": {
          description: { after: "reads one region" },
          tables: {
            added: ["purchaseorder"],
            changed: {
              customer: {
                access: { before: ["read"], after: ["read", "update"] },
                rowFilter: { before: "region = @{region}", after: "region = @{region} and balance > 0" },
                columns: { before: ["name", "balance", "region"] },
              },
            },
          },
        },
      },
    });
    expect(diff.summary).to.equal("roles +1 ~1 -1");
  });

  it("rules: named ones by name, unnamed ones by table, type and column, the others by content then order", () => {
    const before = demoProject({
      rules: [
        {
          name: "total",
          table: "purchaseorder",
          type: "sum",
          column: "amount_total",
          children: "x",
          of: "a",
        },
        { table: "customer", type: "sum", column: "balance", children: "orders", of: "amount_total" },
        { table: "customer", type: "validation", expression: "row.balance >= 0" },
        { table: "customer", type: "validation", expression: "row.credit_limit >= 0" },
        { table: "customer", type: "validation", expression: "row.name != ''" },
        { name: "old name", table: "customer", type: "event", code: "log()" },
      ],
    });
    const diff = diffAfter(before, (d) => {
      d.rules = [
        // Moved, unchanged.
        { table: "customer", type: "validation", expression: "row.credit_limit >= 0" },
        {
          table: "customer",
          type: "sum",
          column: "balance",
          children: "orders",
          of: "amount_total",
          where: "!row.paid",
        },
        { table: "customer", type: "validation", expression: "row.balance >= 0" },
        {
          name: "total",
          table: "purchaseorder",
          type: "sum",
          column: "amount_total",
          children: "x",
          of: "b",
        },
        // The third validation changed.
        { table: "customer", type: "validation", expression: "row.name != null", message: "a name" },
        { name: "new name", table: "customer", type: "event", code: "log()" },
        { table: "purchaseorder", type: "commitValidation", expression: "true" },
      ];
    });
    expect(diff.rules).to.deep.equal({
      added: ["new name", "commitValidation purchaseorder #6"],
      removed: ["old name"],
      changed: {
        "sum customer.balance": { where: { after: "!row.paid" } },
        total: { of: { before: "a", after: "b" } },
        "validation customer #4": {
          expression: { before: "row.name != ''", after: "row.name != null" },
          message: { after: "a name" },
        },
      },
    });
    expect(diff.summary).to.equal("rules +2 ~3 -1");
  });

  it("resources per API version: attributes, subresources, filter, order; versions added and removed", () => {
    const diff = diffAfter(demoProject(), (d) => {
      const customers = d.apiVersions.v1.resources.Customers;
      customers.attributes = { Name: "name", Balance: "credit_limit", Limit: "credit_limit" };
      customers.filter = "balance > 0";
      customers.subresources.Orders.order = "order_number desc";
      customers.subresources.Orders.attributes = { Number: "order_number" };
      d.apiVersions.v1.resources.Orders = { table: "purchaseorder" };
      d.apiVersions.v2 = {};
    });
    expect(diff.apiVersions).to.deep.equal({
      added: ["v2"],
      changed: {
        v1: {
          resources: {
            added: ["Orders"],
            changed: {
              Customers: {
                attributes: {
                  added: ["Limit"],
                  removed: ["Region"],
                  changed: { Balance: { before: "balance", after: "credit_limit" } },
                },
                filter: { after: "balance > 0" },
                subresources: {
                  changed: {
                    Orders: {
                      allColumns: { before: true, after: false },
                      attributes: { added: ["Number"] },
                      order: { after: "order_number desc" },
                    },
                  },
                },
              },
            },
          },
        },
      },
    });
    expect(diff.summary).to.equal("apiVersions +1, resources +1 ~1");
  });

  it("authentication: settings shown, provider config values never", () => {
    const before = demoProject({
      authentication: {
        provider: "custom",
        library: "auth",
        createFunction: "create",
        config: { apiSecret: "s3cret-before", region: "eu", retired: "old-secret" },
      },
      libraries: { auth: { code: "function create() { return 'before'; }" } },
    });
    const diff = diffAfter(before, (d) => {
      d.authentication.config = { apiSecret: "s3cret-after", region: "eu", tenant: "t-secret" };
      d.authentication.keyLifetimeSeconds = 600;
      d.authentication.allowedHosts = ["id.example.com"];
    });
    expect(diff.authentication).to.deep.equal({
      fields: { keyLifetimeSeconds: { after: 600 }, allowedHosts: { after: ["id.example.com"] } },
      config: { added: ["tenant"], removed: ["retired"], changed: ["apiSecret"] },
    });
    const text = JSON.stringify(diff);
    for (const secret of ["s3cret", "old-secret", "t-secret"]) expect(text).not.to.include(secret);
    expect(diff.summary).to.equal("authentication changed");
  });

  it("libraries: a code change is its size and digest, never the code", () => {
    const old = "function create() { return 'before'; }";
    const code = "function create() { return 'after, and longer'; } // é";
    const diff = diffAfter(demoProject({ libraries: { auth: { code: old }, gone: { code: "1" } } }), (d) => {
      d.libraries.auth.code = code;
      delete d.libraries.gone;
      d.libraries.extra = { code: "2" };
    });
    expect(diff.libraries).to.deep.equal({
      added: ["extra"],
      removed: ["gone"],
      changed: {
        auth: {
          before: { bytes: old.length, sha256: sha256(old) },
          after: { bytes: code.length + 1, sha256: sha256(code) },
        },
      },
    });
    expect(JSON.stringify(diff)).not.to.include("function create");
    expect(diff.summary).to.equal("libraries +1 ~1 -1");
  });

  it("summarises every section in one line", () => {
    const diff = diffAfter(canonicalProject(), (d) => {
      d.description = "changed";
      d.tables.note = { key: ["id"], columns: { id: { type: "integer" } } };
      d.tables.customer.columns.region = { type: "string" };
      d.tables.product.columns.sku = { type: "string" };
      d.roles["Full access"].tables["*"].access = ["read"];
      d.rules = d.rules.filter((r: Row) => r.name !== "positive quantity");
    });
    expect(diff.summary).to.equal("tables +1 ~2, roles ~1, rules -1, description changed");
  });
});
