/** Which index a read's filter and order would need when none of the table's serves them (domain/read/index-hint.ts). */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject, type ResourceModel } from "../../../services/data/src/domain/model/project-model.ts";
import { missingIndex } from "../../../services/data/src/domain/read/index-hint.ts";
import type { ClientQuery } from "../../../services/data/src/domain/read/query-builder.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";

/** The demo project's Customers resource, with an index on `region`. */
function customers(): ResourceModel {
  const definition = demoProject();
  (definition.tables.customer as Record<string, unknown>).indexes = [{ columns: ["region"] }];
  const parsed = parseProjectDefinition(definition);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const compiled = compileProject(testIdentity, parsed.definition);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return compiled.model.versions.get("v1")!.resources.get("Customers")!;
}

const query = (parts: Partial<ClientQuery>): ClientQuery => ({
  filters: [],
  sysfilters: [],
  orders: [],
  sysorders: [],
  ...parts,
});

describe("missing index hint", () => {
  const resource = customers();

  it("names none when an index leads with a filtered column, or with the order's first column", () => {
    expect(missingIndex(resource, query({}))).to.equal(undefined);
    expect(missingIndex(resource, query({ filters: ["Region = 'EU'"] }))).to.equal(undefined);
    expect(missingIndex(resource, query({ filters: ["Balance > 1 and Region = 'EU'"] }))).to.equal(undefined);
    expect(missingIndex(resource, query({ filters: ["Name >= 'J'"] }))).to.equal(undefined);
    expect(missingIndex(resource, query({ orders: ["Region desc"] }))).to.equal(undefined);
  });

  it("names the index a filter or an order on a column without one would need", () => {
    expect(missingIndex(resource, query({ filters: ["Balance > 100"] }))).to.equal("customer(balance)");
    expect(missingIndex(resource, query({ orders: ["Balance"] }))).to.equal("customer(balance)");
    // a condition under `or` does not narrow every row: the region index does not serve it
    expect(missingIndex(resource, query({ filters: ["Region = 'EU' or Balance > 1"] }))).to.equal(
      "customer(balance)",
    );
  });
});
