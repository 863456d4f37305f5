import { expect } from "chai";
import { LIMITS, parseFilter } from "../../../services/data/src/query/index.ts";
import { expectBadFilter, strip } from "./helpers.ts";

const attr = (name: string) => ({ name });
const cmp = (name: string, op: string, value: unknown) => ({
  type: "compare",
  attr: attr(name),
  op,
  value,
  upper: false,
});
const str = (value: string) => ({ kind: "string", value });
const num = (value: number, text = String(value)) => ({ kind: "number", value, text });

describe("query: parseFilter", () => {
  describe("comparisons", () => {
    for (const op of ["=", "<>", "<", "<=", ">", ">="]) {
      it(`parses ${op}`, () => {
        expect(strip(parseFilter(`a ${op} 1`))).to.deep.equal(cmp("a", op, num(1)));
      });
    }

    it("normalises != to <>", () => {
      expect(strip(parseFilter("a != 'x'"))).to.deep.equal(cmp("a", "<>", str("x")));
    });

    it("needs no spaces around operators", () => {
      expect(strip(parseFilter("a>=-5"))).to.deep.equal(cmp("a", ">=", num(-5)));
      expect(strip(parseFilter("a<>'x'"))).to.deep.equal(cmp("a", "<>", str("x")));
    });

    it("parses every value form", () => {
      expect(strip(parseFilter("a = true")).value).to.deep.equal({ kind: "boolean", value: true });
      expect(strip(parseFilter("a = FALSE")).value).to.deep.equal({ kind: "boolean", value: false });
      expect(strip(parseFilter("a = Null")).value).to.deep.equal({ kind: "null" });
      expect(strip(parseFilter("a = @{region}")).value).to.deep.equal({ kind: "global", name: "region" });
      expect(strip(parseFilter("a = @{_apikey.user_identifier}")).value).to.deep.equal({
        kind: "global",
        name: "_apikey.user_identifier",
      });
    });

    it("parses integers, decimals, negatives and exponents", () => {
      const cases: [string, number][] = [
        ["0", 0],
        ["42", 42],
        ["-7", -7],
        ["3.25", 3.25],
        ["-0.5", -0.5],
        [".5", 0.5],
        ["5.", 5],
        ["1e3", 1000],
        ["1E+3", 1000],
        ["2.5e-3", 0.0025],
        ["-1e21", -1e21],
      ];
      for (const [text, value] of cases) {
        expect(strip(parseFilter(`a = ${text}`)).value, text).to.deep.equal({ kind: "number", value, text });
      }
    });

    it("turns -0 into 0", () => {
      expect(strip(parseFilter("a = -0")).value).to.deep.include({ value: 0 });
      expect(Object.is((parseFilter("a = -0") as { value: { value: number } }).value.value, -0)).to.equal(
        false,
      );
    });

    it("records 0-based positions on nodes and values", () => {
      const node = parseFilter("  amount > 10") as {
        pos: number;
        attr: { pos: number };
        value: { pos: number };
      };
      expect(node.pos).to.equal(2);
      expect(node.attr.pos).to.equal(2);
      expect(node.value.pos).to.equal(11);
    });

    it("records the parameter on the root node", () => {
      expect(parseFilter("a = 1").source).to.equal("filter");
      expect(parseFilter("a = 1", "row filter").source).to.equal("row filter");
    });
  });

  describe("strings and names", () => {
    it("unescapes '' inside strings", () => {
      expect(strip(parseFilter("name = 'O''Brien'")).value).to.deep.equal(str("O'Brien"));
      expect(strip(parseFilter("name = ''''")).value).to.deep.equal(str("'"));
      expect(strip(parseFilter("name = ''")).value).to.deep.equal(str(""));
    });

    it("keeps everything else in strings verbatim (no backslash escapes)", () => {
      expect(strip(parseFilter("name = 'a\\nb\\'")).value).to.deep.equal(str("a\\nb\\"));
      expect(strip(parseFilter("name = 'a\nb'")).value).to.deep.equal(str("a\nb"));
    });

    it("keeps keywords and operators inside strings as text", () => {
      expect(strip(parseFilter("name = 'x'' or 1=1 --'")).value).to.deep.equal(str("x' or 1=1 --"));
    });

    it('accepts double-quoted names with "" escapes, keywords and spaces', () => {
      expect(strip(parseFilter('"first name" = 1')).attr).to.deep.equal(attr("first name"));
      expect(strip(parseFilter('"and" = 1')).attr).to.deep.equal(attr("and"));
      expect(strip(parseFilter('"say ""hi""" = 1')).attr).to.deep.equal(attr('say "hi"'));
    });

    it("accepts bare names with underscores and digits", () => {
      expect(strip(parseFilter("_x9_Y = 1")).attr).to.deep.equal(attr("_x9_Y"));
    });

    it("keeps Unicode in strings and quoted names", () => {
      expect(strip(parseFilter("name = 'Zoë 😀 日本'")).value).to.deep.equal(str("Zoë 😀 日本"));
      expect(strip(parseFilter('"prénom" = 1')).attr).to.deep.equal(attr("prénom"));
    });
  });

  describe("keywords", () => {
    it("are case-insensitive", () => {
      const lower = strip(parseFilter("not a = 1 and b is not null or c not like 'x' or d not in (1)"));
      const mixed = strip(parseFilter("NoT a = 1 AND b IS NOT NULL Or c NOT LIKE 'x' OR d NoT In (1)"));
      expect(mixed).to.deep.equal(lower);
    });

    it("cannot be bare attribute names", () => {
      expectBadFilter(() => parseFilter("null = 1"), { position: 1, includes: "attribute name" });
      expectBadFilter(() => parseFilter("in = 1"), { position: 1, includes: 'write "in" in double quotes' });
    });
  });

  describe("like, in, is null", () => {
    it("parses like and not like", () => {
      expect(strip(parseFilter("name like 'a%'"))).to.deep.equal({
        type: "like",
        attr: attr("name"),
        negated: false,
        pattern: str("a%"),
        upper: false,
      });
      expect(strip(parseFilter("name not like '_b'"))).to.deep.include({ type: "like", negated: true });
    });

    it("needs a string pattern for like", () => {
      expectBadFilter(() => parseFilter("name like 5"), { position: 11, includes: "quoted string pattern" });
      expectBadFilter(() => parseFilter("name like @{g}"), { position: 11 });
    });

    it("parses in-lists with mixed values", () => {
      expect(strip(parseFilter("a in (1, 'x', null, true, @{g})"))).to.deep.equal({
        type: "in",
        attr: attr("a"),
        negated: false,
        values: [
          num(1),
          str("x"),
          { kind: "null" },
          { kind: "boolean", value: true },
          { kind: "global", name: "g" },
        ],
      });
      expect(strip(parseFilter("a not in ('x')"))).to.deep.include({ type: "in", negated: true });
    });

    it("rejects empty and unclosed in-lists", () => {
      expectBadFilter(() => parseFilter("a in ()"), { position: 7, includes: "expected a value" });
      expectBadFilter(() => parseFilter("a in (1, 2"), { position: 11, includes: "',' or ')'" });
      expectBadFilter(() => parseFilter("a in 1"), { position: 6, includes: "'(' after 'in'" });
      expectBadFilter(() => parseFilter("a in (1,)"), { position: 9 });
    });

    it("parses is null and is not null", () => {
      expect(strip(parseFilter("a is null"))).to.deep.equal({
        type: "isNull",
        attr: attr("a"),
        negated: false,
      });
      expect(strip(parseFilter("a IS NOT NULL"))).to.deep.equal({
        type: "isNull",
        attr: attr("a"),
        negated: true,
      });
      expectBadFilter(() => parseFilter("a is 5"), { position: 6, includes: "'null' or 'not null'" });
      expectBadFilter(() => parseFilter("a is not 5"), { position: 10, includes: "'null' after 'is not'" });
    });

    it("rejects not before anything but like and in", () => {
      expectBadFilter(() => parseFilter("a not = 1"), {
        position: 7,
        includes: "'like' or 'in' after 'not'",
      });
    });
  });

  describe("precedence and grouping", () => {
    const a = cmp("a", "=", num(1));
    const b = cmp("b", "=", num(2));
    const c = cmp("c", "=", num(3));

    it("binds and tighter than or", () => {
      expect(strip(parseFilter("a = 1 or b = 2 and c = 3"))).to.deep.equal({
        type: "or",
        items: [a, { type: "and", items: [b, c] }],
      });
      expect(strip(parseFilter("a = 1 and b = 2 or c = 3"))).to.deep.equal({
        type: "or",
        items: [{ type: "and", items: [a, b] }, c],
      });
    });

    it("binds not tighter than and", () => {
      expect(strip(parseFilter("not a = 1 and b = 2"))).to.deep.equal({
        type: "and",
        items: [{ type: "not", item: a }, b],
      });
      expect(strip(parseFilter("not not a = 1"))).to.deep.equal({
        type: "not",
        item: { type: "not", item: a },
      });
    });

    it("honours parentheses", () => {
      expect(strip(parseFilter("(a = 1 or b = 2) and c = 3"))).to.deep.equal({
        type: "and",
        items: [{ type: "or", items: [a, b] }, c],
      });
      expect(strip(parseFilter("not (a = 1 or b = 2)"))).to.deep.equal({
        type: "not",
        item: { type: "or", items: [a, b] },
      });
      expect(strip(parseFilter("((a = 1))"))).to.deep.equal(a);
    });

    it("collects chains into one node", () => {
      expect(strip(parseFilter("a = 1 or b = 2 or c = 3"))).to.deep.equal({ type: "or", items: [a, b, c] });
    });
  });

  describe("errors say where and what", () => {
    const cases: [string, number, string][] = [
      ["", 0, "empty"],
      ["   ", 0, "empty"],
      ["a =", 4, "expected a value after '=', found end of text"],
      ["a = )", 5, "expected a value"],
      ["= 1", 1, "expected an attribute name"],
      ["a 1", 3, "expected a comparison"],
      ["a == 1", 4, "expected a value after '='"],
      ["a = 1 b = 2", 7, "unexpected name 'b'"],
      ["a = 1)", 6, "unbalanced ')'"],
      ["(a = 1", 7, "expected ')' to close the '(' at position 1"],
      ["a = 'abc", 5, "unterminated string"],
      ['"abc = 1', 1, "unterminated quoted name"],
      ['"" = 1', 1, "empty quoted name"],
      ["a = b", 5, "attributes cannot be compared with each other"],
      ["a = 1 and", 10, "expected an attribute name, found end of text"],
      ["a ! 1", 3, "did you mean '!='"],
      ["a = 1.2.3", 5, "malformed number"],
      ["a = 12abc", 5, "malformed number '12a'"],
      ["a = 1e", 5, "malformed number"],
      ["a = - 1", 5, "unexpected '-'"],
      ["a = 1e999", 5, "out of range"],
      ["a = @x", 5, "'@' must start a global"],
      ["a = @{}", 5, "expected a global name"],
      ["a = @{x y}", 8, "expected '}' to close global @{x"],
      ["a = @{x", 8, "expected '}'"],
      ["a = 1 ; drop table x", 7, "unexpected character ';'"],
      ["a.b = 1", 2, "unexpected '.'"],
      ["prénom = 1", 3, "unexpected character 'é'"],
      ["a = 1 &&", 7, "unexpected character '&'"],
      ["a\u00a0= 1", 2, "unexpected character"],
      ["a = 😀", 5, "unexpected character '😀'"],
    ];
    for (const [text, position, message] of cases) {
      it(`${JSON.stringify(text)} → position ${position}: ${message}`, () => {
        const expected = position === 0 ? { includes: message } : { position, includes: message };
        const msg = expectBadFilter(() => parseFilter(text), expected);
        expect(msg).to.match(/^Invalid filter/);
      });
    }
  });

  describe("limits and hostile input", () => {
    it("rejects text longer than the limit, accepts text at the limit", () => {
      const atLimit = `a = '${"x".repeat(LIMITS.maxTextLength - 6)}'`;
      expect(atLimit.length).to.equal(LIMITS.maxTextLength);
      expect(parseFilter(atLimit).type).to.equal("compare");
      expectBadFilter(() => parseFilter(`${atLimit} `), {
        includes: `limit of ${LIMITS.maxTextLength} characters`,
      });
      expectBadFilter(() => parseFilter("a = 1 or ".repeat(100_000)), { includes: "limit" });
    });

    it("rejects nesting deeper than the limit, accepts it at the limit", () => {
      const nest = (n: number) => `${"(".repeat(n)}a = 1${")".repeat(n)}`;
      expect(strip(parseFilter(nest(LIMITS.maxDepth)))).to.deep.equal(cmp("a", "=", num(1)));
      expectBadFilter(() => parseFilter(nest(LIMITS.maxDepth + 1)), {
        position: LIMITS.maxDepth + 1,
        includes: "nesting deeper than the limit",
      });
    });

    it("rejects 1000 parentheses and 1000 nots with a clean error", () => {
      expectBadFilter(() => parseFilter(`${"(".repeat(1000)}a = 1${")".repeat(1000)}`), {
        includes: "nesting",
      });
      expectBadFilter(() => parseFilter(`${"not ".repeat(1000)}a = 1`), { includes: "nesting" });
      expectBadFilter(() => parseFilter("(".repeat(4000)), { includes: "nesting" });
    });

    it("counts not and parentheses together", () => {
      const half = LIMITS.maxDepth / 2;
      const ok = `${"not (".repeat(half)}a = 1${")".repeat(half)}`;
      expect(parseFilter(ok).type).to.equal("not");
      expectBadFilter(() => parseFilter(`not ${ok}`), { includes: "nesting" });
    });

    it("rejects in-lists longer than the limit, accepts the limit", () => {
      const list = (n: number) => `a in (${Array.from({ length: n }, (_, i) => i % 10).join(",")})`;
      expect((parseFilter(list(LIMITS.maxInList)) as { values: unknown[] }).values).to.have.length(
        LIMITS.maxInList,
      );
      expectBadFilter(() => parseFilter(list(LIMITS.maxInList + 1)), {
        includes: "in-list longer than the limit",
      });
    });

    it("handles long flat chains without recursion trouble", () => {
      const text = Array.from({ length: 400 }, (_, i) => `a=${i % 10}`).join(" or ");
      expect(text.length).to.be.below(LIMITS.maxTextLength);
      expect((parseFilter(text) as { items: unknown[] }).items).to.have.length(400);
    });

    it("keeps Mongo operator look-alikes as plain string values", () => {
      for (const value of [
        "$where",
        "$regex",
        '{"$gt": ""}',
        "$ne",
        "this.a == 1",
        "function() { return true }",
      ]) {
        const text = `name = '${value.replaceAll("'", "''")}'`;
        expect(strip(parseFilter(text)).value).to.deep.equal(str(value));
      }
    });

    it("rejects JSON objects and operators outside strings", () => {
      expectBadFilter(() => parseFilter('name = {"$gt": ""}'), {
        position: 8,
        includes: "unexpected character '{'",
      });
      expectBadFilter(() => parseFilter("$where = 1"), { position: 1, includes: "unexpected character '$'" });
      expectBadFilter(() => parseFilter("name = $where"), { position: 8 });
    });

    it("rejects lone surrogates", () => {
      expectBadFilter(() => parseFilter("name = '\ud800'"), { includes: "invalid Unicode" });
    });

    it("escapes control characters in messages", () => {
      const msg = expectBadFilter(() => parseFilter("a = 1 \u0001"), { position: 7 });
      expect(msg).to.include("\\x01");
      expect(msg).not.to.include("\u0001");
    });

    it("shortens long text in messages", () => {
      const msg = expectBadFilter(() => parseFilter(`a = 1 ${"b".repeat(500)}`), { position: 7 });
      expect(msg.length).to.be.below(200);
    });
  });
});
