/**
 * What an account administrator's key may do on a project's data (pure logic):
 * `admin` everything, `reader` read only — never what a project role of the same
 * name as the administrator's role grants — and how an administrator's write is
 * summed up for the audit trail.
 */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject, type ProjectModel } from "../../../services/data/src/domain/model/project-model.ts";
import {
  permissionFor,
  principalOf,
  requirePermission,
} from "../../../services/data/src/domain/read/authorization.ts";
import { changeSummary } from "../../../services/data/src/domain/write/change-summary.ts";
import type { RowChange } from "../../../services/data/src/domain/write/write-plan.ts";
import type { KeyRecord } from "../../../shared/keys/key-record.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";

/** The demo project with roles named like the administrators' roles, granting little. */
function model(): ProjectModel {
  const parsed = parseProjectDefinition(
    demoProject({
      roles: {
        admin: {
          tables: { customer: { access: ["read"], rowFilter: "region = 'none'", columns: ["name"] } },
        },
        reader: { tables: { customer: { access: ["read"], columns: ["name"] } } },
      },
    }),
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const compiled = compileProject(testIdentity, parsed.definition);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
  return compiled.model;
}

function adminRecord(role: "admin" | "reader"): KeyRecord {
  return {
    id: "k",
    kind: "generated",
    account: "acme",
    project: "",
    projectUid: "",
    name: "Admin key for acme [ann]",
    userIdentifier: "ann",
    roles: [role],
    globals: {},
    createdAt: 0,
    expiresAt: null,
    status: "active",
    admin: { login: "ann", role, accountUid: "u", credentialStamp: "s" },
  };
}

describe("an account administrator's principal", () => {
  const project = model();
  const customer = project.tables.get("customer")!;
  const everything = { rowFilters: null, columns: null };

  it("an admin may do everything on every table, whatever a project role named 'admin' grants", () => {
    const principal = principalOf(adminRecord("admin"), project);
    expect(principal.roles).to.deep.equal([]);
    for (const table of project.tables.values()) {
      for (const level of ["read", "insert", "update", "delete"] as const) {
        expect(permissionFor(project, principal, table, level), `${level} ${table.name}`).to.deep.equal(
          everything,
        );
      }
    }
  });

  it("a reader reads every row and column and writes nothing, with a message that says why", () => {
    const principal = principalOf(adminRecord("reader"), project);
    expect(permissionFor(project, principal, customer, "read")).to.deep.equal(everything);
    for (const level of ["insert", "update", "delete"] as const) {
      expect(permissionFor(project, principal, customer, level)).to.equal(null);
      expect(() => requirePermission(project, principal, customer, level)).to.throw(/reader of the account/);
    }
  });

  it("names the administrator in the globals code sees", () => {
    const principal = principalOf(adminRecord("admin"), project);
    expect(principal.globals).to.include({ "_apikey.user_identifier": "ann", "_admin.login": "ann" });
    expect(principal.administrator).to.deep.equal({ login: "ann", role: "admin" });
  });
});

describe("the audit summary of a data write", () => {
  const project = model();
  const change = (table: string, verb: RowChange["verb"]) =>
    ({ table: project.tables.get(table)!, verb }) as RowChange;

  it("counts the rows per table and verb, in the order they were first changed", () => {
    expect(
      changeSummary([
        change("purchaseorder", "INSERT"),
        change("customer", "UPDATE"),
        change("purchaseorder", "INSERT"),
        change("purchaseorder", "DELETE"),
      ]),
    ).to.equal("purchaseorder: 2 inserted, 1 deleted; customer: 1 updated");
    expect(changeSummary([])).to.equal("no rows changed");
  });
});
