import { expect } from "chai";
import { lastAdminProblem } from "../../../services/data/src/domain/admin/account-admins.ts";

describe("the last admin of an account", () => {
  const ann = { login: "ann", role: "admin" as const };
  const bob = { login: "bob", role: "admin" as const };
  const rita = { login: "rita", role: "reader" as const };

  it("may be neither removed nor made a reader", () => {
    expect(lastAdminProblem([ann, rita], "ann", null)).to.contain("last admin");
    expect(lastAdminProblem([ann, rita], "ann", "reader")).to.contain("last admin");
  });

  it("may stay an admin (a new password, say)", () => {
    expect(lastAdminProblem([ann], "ann", "admin")).to.equal(null);
  });

  it("is not the last one while another admin exists; readers do not count", () => {
    expect(lastAdminProblem([ann, bob], "ann", null)).to.equal(null);
    expect(lastAdminProblem([ann, bob, rita], "bob", "reader")).to.equal(null);
    expect(lastAdminProblem([ann, rita], "rita", null)).to.equal(null);
    expect(lastAdminProblem([ann], "newcomer", "reader")).to.equal(null);
  });
});
