import { expect } from "chai";
import { auditCursor } from "../../../services/data/src/http/admin/audit-routes.ts";
import { ApiError } from "../../../shared/errors.ts";

describe("the audit trail's 'since'", () => {
  it("is an entry's id (entries after it) or a time (entries from then on); nothing is everything", () => {
    expect(auditCursor(undefined)).to.equal("");
    expect(auditCursor("")).to.equal("");
    expect(auditCursor("1732390000000-0123456789ab")).to.equal("1732390000000-0123456789ab");
    expect(auditCursor("2024-11-23T19:46:40.000Z")).to.equal("1732391200000-");
    expect(auditCursor("2024-11-23T19:46:40")).to.equal("1732391200000-", "no zone: UTC");
    expect(auditCursor("2024-11-23T20:46:40+01:00")).to.equal("1732391200000-");
    expect(auditCursor("2024-11-23")).to.equal("1732320000000-");
    expect("1732391200000-000000000000" > auditCursor("2024-11-23T19:46:40Z")).to.equal(true);
  });

  it("refuses anything else with 400/4001", () => {
    for (const since of ["yesterday", "12", "2024-13-45T00:00:00Z", "1732390000000-xyz"]) {
      expect(() => auditCursor(since), since)
        .to.throw(ApiError)
        .with.property("errorCode", 4001);
    }
  });
});
