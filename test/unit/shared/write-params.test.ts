import { expect } from "chai";
import { checkWriteParams } from "../../../shared/admin-access/write-params.ts";
import { ApiError } from "../../../shared/errors.ts";
import { redactKeys } from "../../../shared/key-format.ts";

describe("admin writes' query parameters", () => {
  const project = "/admin/v1/accounts/acme/projects/demo";

  it("a project's PUT takes dryRun; reads take their own; nothing else is taken", () => {
    expect(() => checkWriteParams("PUT", project, "dryRun=true")).to.not.throw();
    expect(() => checkWriteParams("PUT", project, "")).to.not.throw();
    expect(() => checkWriteParams("GET", `${project}/revisions`, "since=1&pagesize=5")).to.not.throw();
  });

  it("refuses any other name with 400/4001, a misspelt dryRun and a malformed name included", () => {
    for (const [method, path, query] of [
      ["PUT", project, "dryrun=true"],
      ["PUT", project, "dryRun=true&force=1"],
      ["PUT", `${project}/users/alice`, "dryRun=true"],
      ["DELETE", project, "x"],
      ["POST", `${project}/apikeys`, "%ZZ=1"],
    ] as const) {
      expect(() => checkWriteParams(method, path, query), `${method} ${path}?${query}`)
        .to.throw(ApiError)
        .with.property("errorCode", 4001);
    }
  });
});

describe("key-shaped values", () => {
  it("are redacted wherever they stand; other text is left alone", () => {
    const key = "tsk_AbCdEfGhIjKlMnOpQrStUvWxYz012345";
    expect(redactKeys(`DELETE /apikeys/${key}?x=${key}`)).to.equal(
      "DELETE /apikeys/tsk_[redacted]?x=tsk_[redacted]",
    );
    expect(redactKeys("key tsk_short deleted")).to.equal("key tsk_short deleted");
  });
});
