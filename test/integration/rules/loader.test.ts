/** The documented loader of the canonical example (`node examples/canonical/load.ts`) against a running platform. */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { readState, recountProblems } from "./support.ts";

const root = path.resolve(import.meta.dirname, "../../..");

describe("logic: examples/canonical/load.ts", function () {
  this.timeout(60_000);
  let platform: Platform;
  before(async () => {
    platform = await startPlatform();
  });
  after(() => platform.close());

  const load = () =>
    promisify(execFile)(
      process.execPath,
      ["examples/canonical/load.ts", "--base-url", platform.baseUrl, "--token", platform.adminToken],
      { cwd: root },
    );

  it("loads the project, a user and sample rows; running it again changes no rows", async () => {
    const first = await load();
    expect(first.stdout).to.match(/project demo\/canonical: revision 1 \(created\)/);
    expect(first.stdout).to.match(/amount_total 81 /);
    const api = projectClient(platform.baseUrl, "demo", "canonical");
    const login = await api.login({ username: "clerk", password: "clerk-password" });
    expect(login.status).to.equal(200);
    const state = await readState(api, login.body.apikey);
    expect(state.customer.map((c) => [c.name, c.balance])).to.have.deep.members([
      ["Alpha and Sons", 81],
      ["Beta Ltd", 0],
    ]);
    expect(recountProblems(state)).to.deep.equal([]);
    const second = await load();
    expect(second.stdout).to.match(/revision 2 \(updated\)/);
    const again = await readState(api, login.body.apikey);
    expect(again.lineitem).to.deep.equal(state.lineitem);
    expect(again.customer.map((c) => c.balance)).to.deep.equal(state.customer.map((c) => c.balance));
  });
});
