import { expect } from "chai";
import type { AdminCaller } from "../../../shared/admin-access/caller.ts";
import { checkRole, checkScope, targetOf } from "../../../shared/admin-access/permissions.ts";
import { ApiError } from "../../../shared/errors.ts";

const operator: AdminCaller = { kind: "operator" };
const admin: AdminCaller = { kind: "admin", account: "acme", accountUid: "u1", login: "ann", role: "admin" };
const reader: AdminCaller = { ...admin, login: "rita", role: "reader" };

/** The error a check throws, as `<status>/<errorCode> <message>`, or "ok". */
function outcome(check: () => void): string {
  try {
    check();
    return "ok";
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return `${err.statusCode}/${err.errorCode} ${err.message}`;
  }
}

const decide = (caller: AdminCaller, method: string, path: string) =>
  outcome(() => {
    const target = targetOf(path);
    checkScope(caller, target);
    checkRole(caller, method, target);
  });

describe("admin permissions", () => {
  it("finds the account a path names, decoded, and whether it is the account record", () => {
    expect(targetOf("/admin/v1/accounts/acme")).to.deep.equal({
      account: "acme",
      accountRecord: true,
      readByEveryAdministrator: false,
    });
    expect(targetOf("/admin/v1/accounts/acme/")).to.deep.equal({
      account: "acme",
      accountRecord: true,
      readByEveryAdministrator: false,
    });
    expect(targetOf("/admin/v1/accounts/%61cme/admins")).to.deep.equal({
      account: "acme",
      accountRecord: false,
      readByEveryAdministrator: false,
    });
    expect(targetOf("/admin/v1/accounts/%E0%A4%A/x")).to.deep.equal({
      account: "%E0%A4%A",
      accountRecord: false,
      readByEveryAdministrator: false,
    });
    expect(targetOf("/admin/v1/audit")).to.deep.equal({
      account: undefined,
      accountRecord: false,
      readByEveryAdministrator: false,
    });
    expect(targetOf("/Admin/V1/Accounts/acme/admins")).to.deep.equal({
      account: "acme",
      accountRecord: false,
      readByEveryAdministrator: false,
    });
  });

  it("lets the operator do everything", () => {
    for (const [method, path] of [
      ["DELETE", "/admin/v1/accounts/acme"],
      ["PUT", "/admin/v1/accounts/other/projects/p"],
      ["GET", "/admin/v1/audit"],
    ]) {
      expect(decide(operator, method!, path!)).to.equal("ok");
    }
  });

  it("keeps an admin inside its account, away from deleting it and from platform routes", () => {
    expect(decide(admin, "PUT", "/admin/v1/accounts/acme/projects/p")).to.equal("ok");
    expect(decide(admin, "PUT", "/admin/v1/accounts/acme")).to.equal("ok");
    expect(decide(admin, "DELETE", "/admin/v1/accounts/acme/admins/bob")).to.equal("ok");
    expect(decide(admin, "DELETE", "/admin/v1/accounts/acme")).to.equal(
      "403/4031 Only the platform operator may delete an account",
    );
    expect(decide(admin, "GET", "/admin/v1/audit")).to.equal(
      "403/4031 Only the platform operator may use this route",
    );
  });

  it("answers another account exactly as an absent one, before anything else", () => {
    for (const caller of [admin, reader]) {
      for (const method of ["GET", "PUT", "DELETE"]) {
        expect(decide(caller, method, "/admin/v1/accounts/globex/projects/p")).to.equal(
          "404/4041 No account 'globex'",
        );
        expect(decide(caller, method, "/admin/v1/accounts/Acme")).to.equal("404/4041 No account 'Acme'");
      }
    }
  });

  it("lets every administrator, and only the operator besides, read the definition schema", () => {
    expect(targetOf("/admin/v1/definition-schema").readByEveryAdministrator).to.equal(true);
    expect(targetOf("/admin/v1/definition-schema/x").readByEveryAdministrator).to.equal(false);
    expect(targetOf("/admin/v1/accounts/acme/definition-schema").readByEveryAdministrator).to.equal(false);
    for (const caller of [operator, admin, reader]) {
      expect(decide(caller, "GET", "/admin/v1/definition-schema")).to.equal("ok");
    }
    for (const caller of [admin, reader]) {
      for (const method of ["PUT", "POST", "DELETE"]) {
        expect(decide(caller, method, "/admin/v1/definition-schema")).to.equal(
          "403/4031 Only the platform operator may use this route",
        );
      }
      expect(decide(caller, "GET", "/admin/v1/definition-schemas")).to.equal(
        "403/4031 Only the platform operator may use this route",
      );
    }
  });

  it("lets a reader read only", () => {
    expect(decide(reader, "GET", "/admin/v1/accounts/acme/audit")).to.equal("ok");
    expect(decide(reader, "HEAD", "/admin/v1/accounts/acme")).to.equal("ok");
    for (const method of ["PUT", "POST", "DELETE", "PATCH"]) {
      expect(decide(reader, method, "/admin/v1/accounts/acme/projects/p")).to.equal(
        "403/4031 A reader of the account may only read (GET)",
      );
    }
  });
});
