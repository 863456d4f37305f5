/**
 * Stored rows as text (services/data/src/store/ejson-text.ts): the text is relaxed EJSON whether a
 * row holds only JSON values (written by JSON.stringify) or BSON values and values JSON has no
 * text for (written by EJSON), and it reads back to the same row.
 */
import { expect } from "chai";
import fc from "fast-check";
import { BSON } from "mongodb";
import { ejsonText } from "../../../services/data/src/store/ejson-text.ts";

const ejson = (value: unknown) => BSON.EJSON.stringify(value, { relaxed: true });

describe("stored rows as text", () => {
  it("is the relaxed EJSON text of rows of JSON values", () => {
    const rows: unknown[] = [
      { _id: "r1", _ck: "0123456789abcdef", name: "row 1", qty: 3 },
      { _id: 7, price: 1.5, big: 2 ** 53 + 2, tiny: 5e-324, huge: 1e300, negative: -(2 ** 31) - 1, zero: -0 },
      { _id: true, text: '\u2028 é " \\ \n', flag: false, none: null },
      { _id: "n", nested: { list: [1, "x", null, true, { deep: [] }] }, $odd: "a $-key" },
      Object.assign(Object.create(null), { _id: "no prototype", a: 1 }),
      { database: "t1", writes: [{ kind: "insert", collection: "c", after: { _id: "r", a: [1, 2] } }] },
    ];
    for (const row of rows) expect(ejsonText(row)).to.equal(ejson(row));
  });

  it("is the relaxed EJSON text of rows with BSON values and values JSON writes otherwise", () => {
    const rows: unknown[] = [
      { _id: "d", at: new Date(Date.UTC(2026, 0, 2)) },
      { _id: "o", ref: new BSON.ObjectId("65a1b2c3d4e5f60718293a4b") },
      { _id: "l", n: BSON.Long.fromString("9223372036854775807") },
      { _id: "dec", n: BSON.Decimal128.fromString("1.10") },
      { _id: "bin", b: new BSON.Binary(Buffer.from([1, 2, 3])) },
      { _id: "nan", n: Number.NaN, inf: Number.POSITIVE_INFINITY, minf: Number.NEGATIVE_INFINITY },
      { _id: "u", missing: undefined },
      { _id: "ua", list: [undefined, 1] },
      { _id: "deep", nested: { at: new Date(0) } },
    ];
    for (const row of rows) {
      const text = ejsonText(row);
      expect(text).to.equal(ejson(row));
      expect(BSON.EJSON.parse(text, { relaxed: true })).to.deep.equal(
        BSON.EJSON.parse(ejson(row), { relaxed: true }),
      );
    }
  });

  it("is EJSON's text for any JSON value (property: -0, nested arrays and objects, odd keys)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(ejsonText(value)).to.equal(ejson(value));
      }),
      { numRuns: 2000 },
    );
    expect(ejsonText({ n: -0 })).to.equal(ejson({ n: -0 }));
  });
});
