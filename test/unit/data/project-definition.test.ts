import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { checkFilterText } from "../../../services/data/src/domain/model/filter-check.ts";
import { compileProject } from "../../../services/data/src/domain/model/project-model.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";

function problemsOf(def: unknown) {
  const parsed = parseProjectDefinition(def);
  if (!parsed.ok) return parsed.problems;
  const compiled = compileProject(testIdentity, parsed.definition, checkFilterText);
  return compiled.ok ? [] : compiled.problems;
}

describe("project definitions", () => {
  it("accepts the demo project and compiles its relationships and resources", () => {
    const parsed = parseProjectDefinition(demoProject());
    expect(parsed.ok).to.equal(true);
    if (!parsed.ok) return;
    const compiled = compileProject(testIdentity, parsed.definition, checkFilterText);
    expect(compiled.ok).to.equal(true);
    if (!compiled.ok) return;
    const customer = compiled.model.tables.get("customer")!;
    expect([...customer.children.keys()]).to.deep.equal(["orders"]);
    const v1 = compiled.model.versions.get("v1")!;
    expect([...v1.resources.keys()]).to.include.members([
      "customer",
      "purchaseorder",
      "Customers",
      "Customers.Orders",
    ]);
    expect(v1.resources.get("Customers.Orders")!.via!.kind).to.equal("children");
  });
  it("lists every structural problem with its JSON path", () => {
    const def = demoProject() as any;
    def.tables.customer.columns.name.type = "text";
    def.tables.customer.columns["bad name"] = { type: "string" };
    def.roles["Full access"].tables["*"].access = ["read", "fly"];
    const paths = problemsOf(def).map((p) => p.path);
    expect(paths).to.include.members([
      "$.tables.customer.columns.name.type",
      '$.tables.customer.columns["bad name"]',
      '$.roles["Full access"].tables["*"].access[1]',
    ]);
  });
  it("lists cross-reference problems: keys, parents, resources, roles, filters", () => {
    const def = demoProject() as any;
    def.tables.customer.key = ["missing"];
    def.tables.purchaseorder.parents.customer.table = "nobody";
    def.apiVersions.v1.resources.Customers.attributes.Nope = "nope";
    def.roles["Region reader"].tables.customer.columns.push("ghost");
    def.roles["Region reader"].tables.customer.rowFilter = "regio = 'x'";
    const paths = problemsOf(def).map((p) => p.path);
    expect(paths).to.include.members([
      "$.tables.customer.key[0]",
      "$.tables.purchaseorder.parents.customer.table",
      "$.apiVersions.v1.resources.Customers.attributes.Nope",
      '$.roles["Region reader"].tables.customer.columns[3]',
      '$.roles["Region reader"].tables.customer.rowFilter',
    ]);
  });
  it("rejects column names that could be read as operators or paths", () => {
    for (const name of ["$where", "a.b", "_id", "_ck"]) {
      const def = demoProject() as any;
      def.tables.customer.columns[name] = { type: "string" };
      expect(problemsOf(def).length, name).to.be.greaterThan(0);
    }
  });
  it("checks a custom provider names an existing library", () => {
    const def = demoProject({
      authentication: { provider: "custom", library: "missing", createFunction: "create" },
    });
    expect(problemsOf(def).map((p) => p.path)).to.include("$.authentication.library");
    const inherited = demoProject({
      authentication: { provider: "custom", library: "constructor", createFunction: "create" },
    });
    expect(problemsOf(inherited)).to.deep.equal([
      { path: "$.authentication.library", message: "no library 'constructor' in 'libraries'" },
    ]);
  });
});
