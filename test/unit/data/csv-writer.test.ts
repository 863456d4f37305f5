/** The CSV form of rows, read back with a strict RFC 4180 parser (csv-parse). */
import { expect } from "chai";
import { parse } from "csv-parse/sync";
import fc from "fast-check";
import { toCsv } from "../../../services/data/src/http/csv-writer.ts";

interface Cell {
  text: string;
  quoted: boolean;
}

/** Every record as cells, with whether the field was quoted (null and "" differ only there). */
function readCsv(text: string): Cell[][] {
  return parse(text, {
    record_delimiter: "\r\n",
    cast: (value, context) => ({ text: value, quoted: context.quoting }) as unknown as string,
  }) as unknown as Cell[][];
}

const columns = (...headers: string[]) => headers.map((h) => ({ header: h, path: [h] }));

/** What a spreadsheet-safe cell holds for a value: formulas get a leading quote, numbers never change. */
function expectedText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

describe("CSV writer", () => {
  it("writes a header row and CRLF records; null is empty, the empty string quoted", () => {
    const csv = toCsv(columns("name", "n", "ok", "note"), [
      { name: "a", n: 1.5, ok: true, note: null },
      { name: "", n: -2, ok: false, note: "x" },
    ]);
    expect(csv).to.equal('name,n,ok,note\r\na,1.5,true,\r\n"",-2,false,x\r\n');
    expect(readCsv(csv)[2]![0]).to.deep.equal({ text: "", quoted: true });
    expect(readCsv(csv)[1]![3]).to.deep.equal({ text: "", quoted: false });
  });

  it("quotes commas, quotes and line breaks, and defuses formulas but not numbers", () => {
    const csv = toCsv(columns("v"), [
      { v: 'a,"b"\r\nc' },
      { v: '=HYPERLINK("http://evil","x")' },
      { v: "+1" },
      { v: "-1" },
      { v: -1 },
      { v: "@SUM(A1)" },
      { v: "\tx" },
    ]);
    expect(readCsv(csv).map((r) => r[0]!.text)).to.deep.equal([
      "v",
      'a,"b"\r\nc',
      `'=HYPERLINK("http://evil","x")`,
      "'+1",
      "'-1",
      "-1",
      "'@SUM(A1)",
      "'\tx",
    ]);
  });

  for (const [name, lineBreak] of [
    ["LF", "\n"],
    ["CR", "\r"],
    ["CRLF", "\r\n"],
  ] as const) {
    it(`quotes a field holding a bare ${name}, so a reader that splits records on LF keeps the record whole`, () => {
      const value = `line1${lineBreak}line2`;
      const csv = toCsv(columns("id", "notes"), [{ id: 1, notes: value }]);
      expect(readCsv(csv)[1]).to.deep.equal([
        { text: "1", quoted: false },
        { text: value, quoted: true },
      ]);
      const splitOnLf = parse(csv, { record_delimiter: "\n", rtrim: true }) as string[][];
      expect(splitOnLf.map((record) => record.map((field) => field.replace(/\r$/, "")))).to.deep.equal([
        ["id", "notes"],
        ["1", value],
      ]);
    });
  }

  it("flattens paths, writes objects and arrays as JSON text, and leaves missing values empty", () => {
    const csv = toCsv(
      [
        { header: "name", path: ["name"] },
        { header: "customer.name", path: ["customer", "name"] },
        { header: "profile", path: ["profile"] },
      ],
      [
        { name: "o1", customer: { name: "Jones" }, profile: { a: [1, "x"] } },
        { name: "o2", customer: null, profile: [] },
      ],
    );
    expect(readCsv(csv).map((r) => r.map((c) => c.text))).to.deep.equal([
      ["name", "customer.name", "profile"],
      ["o1", "Jones", '{"a":[1,"x"]}'],
      ["o2", "", "[]"],
    ]);
  });

  it("any row of any values reads back cell for cell", () => {
    const value = fc.oneof(
      fc.string({ unit: "binary", maxLength: 20 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.array(fc.array(value, { minLength: 3, maxLength: 3 }), { maxLength: 5 }), (rows) => {
        const csv = toCsv(
          columns("a", "b", "c"),
          rows.map(([a, b, c]) => ({ a, b, c })),
        );
        const read = readCsv(csv);
        expect(read.length).to.equal(rows.length + 1);
        rows.forEach((row, i) => {
          expect(read[i + 1]!.map((c) => c.text)).to.deep.equal(row.map(expectedText));
          row.forEach((v, j) => {
            if (v === "") expect(read[i + 1]![j]!.quoted).to.equal(true);
            if (v === null) expect(read[i + 1]![j]!.quoted).to.equal(false);
          });
        });
      }),
      { numRuns: 300 },
    );
  });
});
