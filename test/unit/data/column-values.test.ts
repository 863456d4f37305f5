import { expect } from "chai";
import {
  coerceValue,
  keySegment,
  parseKeySegment,
} from "../../../services/data/src/domain/model/column-values.ts";
import type { ColumnModel, TableModel } from "../../../services/data/src/domain/model/project-model.ts";

const col = (type: ColumnModel["type"], extra: Partial<ColumnModel> = {}): ColumnModel => ({
  name: "c",
  type,
  required: false,
  generated: false,
  default: undefined,
  ...extra,
});
const errorCode = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { errorCode: number }).errorCode;
  }
};

describe("column values", () => {
  it("coerces to the column type", () => {
    expect(coerceValue(col("integer"), "42", "c")).to.equal(42);
    expect(coerceValue(col("number"), 1.5, "c")).to.equal(1.5);
    expect(coerceValue(col("boolean"), "true", "c")).to.equal(true);
    expect(coerceValue(col("string"), 7, "c")).to.equal("7");
    expect(coerceValue(col("date"), "2024-02-29", "c")).to.equal("2024-02-29");
    expect(coerceValue(col("datetime"), "2024-01-01T10:00:00+02:00", "c")).to.equal(
      "2024-01-01T08:00:00.000Z",
    );
    expect(coerceValue(col("json"), { $gt: 1 }, "c")).to.equal('{"$gt":1}');
    expect(coerceValue(col("integer"), null, "c")).to.equal(null);
  });
  it("refuses what does not fit with 4003 naming the attribute", () => {
    for (const [type, value] of [
      ["integer", 1.5],
      ["integer", "x"],
      ["number", "NaN"],
      ["number", ""],
      ["boolean", 1],
      ["date", "2023-02-29"],
      ["datetime", "yesterday"],
      ["string", { $gt: "" }],
      ["number", [1]],
    ] as const) {
      expect(
        errorCode(() => coerceValue(col(type), value, "c")),
        `${type} ${JSON.stringify(value)}`,
      ).to.equal(4003);
    }
    expect(errorCode(() => coerceValue(col("string", { maxLength: 2 }), "abc", "c"))).to.equal(4003);
  });
  it("round-trips composite keys with reserved characters through URL segments", () => {
    const table = {
      name: "t",
      key: ["a", "b"],
      columns: new Map([
        ["a", { ...col("string"), name: "a" }],
        ["b", { ...col("integer"), name: "b" }],
      ]),
    } as unknown as TableModel;
    const row = { a: "x/y, z%", b: 7 };
    const segment = keySegment(table, row);
    expect(segment).to.not.contain("/");
    expect(parseKeySegment(table, segment)).to.deep.equal(row);
    expect(errorCode(() => parseKeySegment(table, "only-one"))).to.equal(4001);
    expect(errorCode(() => parseKeySegment(table, "%E0%A4%A,1"))).to.equal(4001);
    expect(errorCode(() => parseKeySegment(table, "a,notanumber"))).to.equal(4001);
  });
});
