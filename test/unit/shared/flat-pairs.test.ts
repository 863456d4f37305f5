import { expect } from "chai";
import { pairsOf } from "../../../shared/redis/flat-pairs.ts";

describe("a Redis reply of names and values", () => {
  it("reads as [name, value] pairs in order, an empty name or value included", () => {
    expect(pairsOf(["verb", "insert", "table", "", "", "x"])).to.deep.equal([
      ["verb", "insert"],
      ["table", ""],
      ["", "x"],
    ]);
  });

  it("leaves out a last name without its value; nothing is no pairs", () => {
    expect(pairsOf(["db1", "1700000000", "db2"])).to.deep.equal([["db1", "1700000000"]]);
    expect(pairsOf([])).to.deep.equal([]);
  });
});
