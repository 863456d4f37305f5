import { expect } from "chai";
import { checkPrecondition, projectTag } from "../../../services/data/src/domain/admin/project-changes.ts";
import { ApiError } from "../../../shared/errors.ts";
import { parseIfMatch } from "../../../shared/http/if-match.ts";

function status(check: () => void): number {
  try {
    check();
    return 200;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return err.statusCode;
  }
}

describe("If-Match on a project's incarnation and revision", () => {
  it("reads entity tags, lists of them, and *; weak tags match nothing", () => {
    expect(parseIfMatch("")).to.equal(undefined);
    expect(parseIfMatch(' "u1.3" ')).to.deep.equal({ tags: ["u1.3"] });
    expect(parseIfMatch('"u1.3", W/"u1.4" ,"u2.5"')).to.deep.equal({ tags: ["u1.3", "u2.5"] });
    expect(parseIfMatch("*")).to.deep.equal({ anyState: true });
    expect(parseIfMatch('"3"')).to.deep.equal({ tags: ["3"] });
  });

  it("refuses what is not an entity tag with 400", () => {
    for (const header of ["3", '"3', "W/3", '"3" "4"', "**"]) {
      expect(
        status(() => parseIfMatch(header)),
        header,
      ).to.equal(400);
    }
  });

  it("is met only by the current incarnation's current revision, or by * when the project exists", () => {
    const at = (revision: number, uid = "u1") => ({ uid, revision });
    expect(status(() => checkPrecondition(undefined, undefined))).to.equal(200);
    expect(status(() => checkPrecondition({ tags: [projectTag(at(3))] }, at(3)))).to.equal(200);
    expect(status(() => checkPrecondition({ tags: ["u1.2", "u1.3"] }, at(3)))).to.equal(200);
    expect(status(() => checkPrecondition({ tags: ["u1.2"] }, at(3)))).to.equal(412);
    // The same revision of another incarnation (deleted and created again), or a bare revision number.
    expect(status(() => checkPrecondition({ tags: ["u1.1"] }, at(1, "u2")))).to.equal(412);
    expect(status(() => checkPrecondition({ tags: ["1"] }, at(1)))).to.equal(412);
    expect(status(() => checkPrecondition({ tags: ["u1.1"] }, undefined))).to.equal(412);
    expect(status(() => checkPrecondition({ anyState: true }, at(1)))).to.equal(200);
    expect(status(() => checkPrecondition({ anyState: true }, undefined))).to.equal(412);
  });
});
