import { expect } from "chai";
import { estimatedModelBytes, SharedModels } from "../../../services/data/src/domain/model/shared-models.ts";

const table = { key: ["id"], columns: { id: { type: "string", required: true }, note: { type: "string" } } };
const definition = (role = "Full access") => ({
  authentication: { provider: "builtin" },
  tables: { first: table, second: table },
  apiVersions: { v1: { resources: {} } },
  roles: { [role]: { tables: { "*": { access: ["read"] } } } },
});
const identity = (account: string) => ({
  account,
  name: "app",
  uid: `${account}-uid`,
  revision: 1,
  storage: { database: `tn_${account}`, collectionPrefix: "app~1." },
});

describe("shared project models", () => {
  it("gives projects of the same definition text one compilation, each its own identity", () => {
    const models = new SharedModels(1024 * 1024);
    const a = models.model(identity("a"), definition(), "a/app");
    const b = models.model(identity("b"), definition(), "b/app");
    expect(a.tables).to.equal(b.tables);
    expect([a.account, a.storage.database, b.account, b.storage.database]).to.deep.equal([
      "a",
      "tn_a",
      "b",
      "tn_b",
    ]);
    const c = models.model(identity("c"), definition("Reader"), "c/app");
    expect(c.tables).to.not.equal(a.tables);
    expect([...c.roles.keys()]).to.deep.equal(["Reader"]);
  });

  it("charges the first holder of a compilation for all of it, the next ones a share", () => {
    const models = new SharedModels(1024 * 1024);
    const first = models.model(identity("a"), definition(), "a/app");
    const second = models.model(identity("b"), definition(), "b/app");
    const full = estimatedModelBytes(JSON.stringify(definition()).length);
    const firstBytes = models.held(first);
    const secondBytes = models.held(second);
    expect(firstBytes).to.be.greaterThan(full);
    expect(secondBytes).to.be.lessThan(firstBytes - full / 3);
    models.released(first);
    models.released(second);
    // Alone again: all of it (the identities' strings are as long as the first one's).
    expect(models.held(second)).to.equal(firstBytes);
  });

  it("refuses a stored definition that no longer compiles, naming the project", () => {
    const models = new SharedModels(1024 * 1024);
    const broken = { ...definition(), roles: { r: { tables: { missing: { access: ["read"] } } } } };
    expect(() => models.model(identity("a"), broken, "a/app")).to.throw("a/app");
  });
});
