import { expect } from "chai";
import { parseFilter, parseSysfilter } from "../../../services/data/src/query/index.ts";
import { expectBadFilter, strip } from "./helpers.ts";

const str = (value: string) => ({ kind: "string", value });

describe("query: parseSysfilter", () => {
  it("produces the same AST as the equivalent filter", () => {
    const pairs: [string, string][] = [
      ["equal(name: 'Alpha')", "name = 'Alpha'"],
      ["notequal(balance: 5)", "balance <> 5"],
      ["less(balance: -1.5)", "balance < -1.5"],
      ["lessequal(balance: 1e3)", "balance <= 1e3"],
      ["greater(paid: false)", "paid > false"],
      ["greaterequal(paid: TRUE)", "paid >= true"],
      ["like(name: 'A%')", "name like 'A%'"],
      ["notlike(name: '_b')", "name not like '_b'"],
      ["equal(name: null)", "name is null"],
      ["notequal(name: null)", "name is not null"],
      ["less(balance: null)", "balance < null"],
      ["equal(name: 'a', balance: 2)", "name = 'a' and balance = 2"],
      ["equal_or(name: 'a', name: 'b', name: null)", "name = 'a' or name = 'b' or name is null"],
    ];
    for (const [sys, filter] of pairs) {
      expect(strip(parseSysfilter(sys)), sys).to.deep.equal(strip(parseFilter(filter)));
    }
  });

  it("marks _uc comparisons as upper-cased on both sides", () => {
    expect(strip(parseSysfilter("equal_uc(name: 'abc')"))).to.deep.equal({
      type: "compare",
      attr: { name: "name" },
      op: "=",
      value: str("abc"),
      upper: true,
    });
    expect(strip(parseSysfilter("like_uc(name: 'a%')"))).to.deep.include({ type: "like", upper: true });
    const both = strip(parseSysfilter("notequal_uc_or(a: 'x', b: 'y')")) as {
      type: string;
      items: unknown[];
    };
    expect(both.type).to.equal("or");
    expect(both.items).to.deep.equal([
      { type: "compare", attr: { name: "a" }, op: "<>", value: str("x"), upper: true },
      { type: "compare", attr: { name: "b" }, op: "<>", value: str("y"), upper: true },
    ]);
  });

  it("treats _uc with null like the plain null test", () => {
    expect(strip(parseSysfilter("equal_uc(name: null)"))).to.deep.equal(strip(parseFilter("name is null")));
  });

  it("accepts op names in any case and free whitespace", () => {
    expect(strip(parseSysfilter(" EQUAL_UC ( name :'x' , b : 1 ) "))).to.deep.equal(
      strip(parseSysfilter("equal_uc(name:'x',b:1)")),
    );
  });

  it("records the parameter and positions", () => {
    const node = parseSysfilter("equal(name: 'x')") as {
      source: string;
      attr: { pos: number };
      value: { pos: number };
    };
    expect(node.source).to.equal("sysfilter");
    expect(node.attr.pos).to.equal(6);
    expect(node.value.pos).to.equal(12);
  });

  describe("values", () => {
    const value = (text: string) => (strip(parseSysfilter(`equal(a: ${text})`)) as { value: unknown }).value;

    it("takes single- and double-quoted strings with JavaScript escapes", () => {
      expect(value(`'it\\'s'`)).to.deep.equal(str("it's"));
      expect(value(`"say \\"hi\\""`)).to.deep.equal(str('say "hi"'));
      expect(value(`"it's"`)).to.deep.equal(str("it's"));
      expect(value(`'a\\nb\\tc\\r\\b\\f\\v\\0'`)).to.deep.equal(str("a\nb\tc\r\b\f\v\0"));
      expect(value(`'\\x41\\u0042\\u{1F600}'`)).to.deep.equal(str("AB😀"));
      expect(value(`'back\\\\slash'`)).to.deep.equal(str("back\\slash"));
      expect(value(`'\\q\\%'`)).to.deep.equal(str("q%"));
      expect(value(`'line\\\ncontinued'`)).to.deep.equal(str("linecontinued"));
      expect(value(`''`)).to.deep.equal(str(""));
    });

    it("takes numbers and case-insensitive true, false, null", () => {
      expect(value("-2.5e1")).to.deep.equal({ kind: "number", value: -25, text: "-2.5e1" });
      expect(value("True")).to.deep.equal({ kind: "boolean", value: true });
      expect(value("false")).to.deep.equal({ kind: "boolean", value: false });
      expect(strip(parseSysfilter("greater(a: NULL)"))).to.deep.include({ value: { kind: "null" } });
    });

    it("keeps operator look-alikes as strings", () => {
      expect(value(`'{"$gt": ""}'`)).to.deep.equal(str('{"$gt": ""}'));
      expect(value(`"$where"`)).to.deep.equal(str("$where"));
    });

    it("rejects bad escapes and unterminated strings with positions", () => {
      expectBadFilter(() => parseSysfilter("equal(a: '\\1')"), { position: 11, includes: "octal" });
      expectBadFilter(() => parseSysfilter("equal(a: '\\xZ1')"), {
        position: 11,
        includes: "two hex digits",
      });
      expectBadFilter(() => parseSysfilter("equal(a: '\\u12')"), {
        position: 11,
        includes: "four hex digits",
      });
      expectBadFilter(() => parseSysfilter("equal(a: '\\u{110000}')"), {
        position: 11,
        includes: "\\u{...}",
      });
      expectBadFilter(() => parseSysfilter("equal(a: '\\ud800')"), {
        position: 10,
        includes: "lone surrogate",
      });
      expectBadFilter(() => parseSysfilter("equal(a: 'abc)"), {
        position: 10,
        includes: "unterminated string",
      });
      expectBadFilter(() => parseSysfilter("equal(a: 'abc\\')"), { position: 10, includes: "unterminated" });
    });

    it("rejects bare words, objects and globals as values", () => {
      expectBadFilter(() => parseSysfilter("equal(a: abc)"), { position: 10, includes: "expected a value" });
      expectBadFilter(() => parseSysfilter('equal(a: {"$gt": ""})'), { position: 10, includes: "'{'" });
      expectBadFilter(() => parseSysfilter("equal(a: @{g})"), { position: 10, includes: "'@'" });
    });
  });

  describe("errors", () => {
    const cases: [string, number | undefined, string][] = [
      ["", undefined, "empty"],
      ["between(a: 1)", 1, "unknown operator 'between'"],
      ["equal_xx(a: 1)", 1, "unknown operator"],
      ["equal_or_uc(a: 1)", 1, "unknown operator"],
      ["equal a: 1", 7, "expected '(' after equal"],
      ["equal()", 7, "expected an attribute name"],
      ["equal(a 1)", 9, "expected ':' after attribute 'a'"],
      ["equal(a: 1", 11, "expected ',' or ')'"],
      ["equal(a: 1,)", 12, "expected an attribute name"],
      ["equal(a: 1) and x", 13, "repeat the sysfilter parameter"],
      ["equal(a: 1)equal(b: 2)", 12, "expected the end"],
      ["like(a: 5)", 9, "like needs a quoted string pattern"],
      ["notlike(a: null)", 12, "notlike needs a quoted string pattern"],
      ["(a: 1)", 1, "expected an operator"],
    ];
    for (const [text, position, message] of cases) {
      it(`${JSON.stringify(text)}: ${message}`, () => {
        const msg = expectBadFilter(() => parseSysfilter(text), { position, includes: message });
        expect(msg).to.match(/^Invalid sysfilter/);
      });
    }

    it("lists the operators when the operator is unknown", () => {
      expectBadFilter(() => parseSysfilter("eq(a: 1)"), {
        includes: ["equal, notequal, less, lessequal, greater, greaterequal, like, notlike", "_uc_or"],
      });
    });

    it("rejects over-long text", () => {
      expectBadFilter(() => parseSysfilter(`equal(a: '${"x".repeat(5000)}')`), { includes: "limit" });
    });
  });
});
