import { expect } from "chai";
import { auditCursor } from "../../../services/data/src/http/admin/audit-routes.ts";
import { auditId } from "../../../services/data/src/store/audit-store.ts";
import { ApiError } from "../../../shared/errors.ts";

describe("the audit trail's 'since'", () => {
  it("is an entry's id (entries after it) or a time (entries from then on); nothing is everything", () => {
    expect(auditCursor(undefined)).to.deep.equal({ after: "" });
    expect(auditCursor("")).to.deep.equal({ after: "" });
    expect(auditCursor("e0000000000000042")).to.deep.equal({ after: "e0000000000000042" });
    expect(auditCursor("1732390000000-0123456789ab"), "an id of an earlier version").to.deep.equal({
      after: "1732390000000-0123456789ab",
    });
    const at = new Date(1732391200000);
    expect(auditCursor("2024-11-23T19:46:40.000Z")).to.deep.equal({ from: at });
    expect(auditCursor("2024-11-23T19:46:40")).to.deep.equal({ from: at }, "no zone: UTC");
    expect(auditCursor("2024-11-23T20:46:40+01:00")).to.deep.equal({ from: at });
    expect(auditCursor("2024-11-23")).to.deep.equal({ from: new Date(1732320000000) });
  });

  it("ids of the sequence sort as strings, after those of earlier versions", () => {
    const ids = [auditId(1), auditId(9), auditId(10), auditId(123_456_789)];
    expect([...ids].sort()).to.deep.equal(ids);
    expect(auditId(1) > "9999999999999-ffffffffffff").to.equal(true);
  });

  it("refuses anything else with 400/4001", () => {
    for (const since of ["yesterday", "12", "2024-13-45T00:00:00Z", "1732390000000-xyz", "e12"]) {
      expect(() => auditCursor(since), since)
        .to.throw(ApiError)
        .with.property("errorCode", 4001);
    }
  });
});
