/** CSV columns of answers no definition describes: lists of objects only, columns in order of appearance. */
import { expect } from "chai";
import { answerCsvColumns } from "../../../services/data/src/http/answer-csv-columns.ts";
import { ApiError } from "../../../shared/errors.ts";

const headers = (answer: unknown) => answerCsvColumns(answer, "R").map((c) => c.header);

describe("answer CSV columns", () => {
  it("are the objects' properties in the order they first appear, without @metadata", () => {
    expect(
      headers([
        { "@metadata": { href: "h" }, b: 1, a: 2 },
        { c: { nested: true }, a: 3 },
        { "@metadata": { next_batch: "n" } },
      ]),
    ).to.deep.equal(["b", "a", "c"]);
    expect(headers({ total: 3, region: "west" })).to.deep.equal(["total", "region"]);
    expect(headers([])).to.deep.equal([]);
    expect(answerCsvColumns([{ "a.b": 1 }], "R")).to.deep.equal([{ header: "a.b", path: ["a.b"] }]);
  });

  it("refuse answers that are not objects or lists of objects (400/4001)", () => {
    for (const answer of [[1, 2], ["a"], [{ a: 1 }, null], [[{ a: 1 }]], 42, null]) {
      let error: unknown;
      try {
        answerCsvColumns(answer, "Totals");
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(answer)).to.be.instanceOf(ApiError);
      expect((error as ApiError).errorCode).to.equal(4001);
      expect((error as ApiError).message).to.equal(
        "The answer of 'Totals' is not a list of objects, so it has no CSV form; use json or xml",
      );
    }
  });
});
