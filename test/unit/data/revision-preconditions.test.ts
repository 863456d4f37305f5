import { expect } from "chai";
import { checkPrecondition } from "../../../services/data/src/domain/project-changes.ts";
import { parseIfMatch } from "../../../services/data/src/http/admin/if-match.ts";
import { ApiError } from "../../../shared/errors.ts";

function status(check: () => void): number {
  try {
    check();
    return 200;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return err.statusCode;
  }
}

describe("If-Match on a project's revision", () => {
  it("reads revisions, lists of them, and *; weak tags match nothing", () => {
    expect(parseIfMatch("")).to.equal(undefined);
    expect(parseIfMatch(' "3" ')).to.deep.equal({ revisions: [3] });
    expect(parseIfMatch('"3", W/"4" ,"5"')).to.deep.equal({ revisions: [3, 5] });
    expect(parseIfMatch("*")).to.deep.equal({ anyRevision: true });
    expect(parseIfMatch('"abc"')).to.deep.equal({ revisions: [] });
  });

  it("refuses what is not an entity tag with 400", () => {
    for (const header of ["3", '"3', "W/3", '"3" "4"', "**"]) {
      expect(
        status(() => parseIfMatch(header)),
        header,
      ).to.equal(400);
    }
  });

  it("is met only by the current revision, or by * when the project exists", () => {
    expect(status(() => checkPrecondition(undefined, undefined))).to.equal(200);
    expect(status(() => checkPrecondition({ revisions: [3] }, 3))).to.equal(200);
    expect(status(() => checkPrecondition({ revisions: [2, 3] }, 3))).to.equal(200);
    expect(status(() => checkPrecondition({ revisions: [2] }, 3))).to.equal(412);
    expect(status(() => checkPrecondition({ revisions: [1] }, undefined))).to.equal(412);
    expect(status(() => checkPrecondition({ anyRevision: true }, 1))).to.equal(200);
    expect(status(() => checkPrecondition({ anyRevision: true }, undefined))).to.equal(412);
  });
});
