import { expect } from "chai";
import fc from "fast-check";
import {
  type FilterNode,
  type Literal,
  parseFilter,
  parseOrder,
  printFilter,
  printOrder,
} from "../../../services/data/src/query/index.ts";
import { strip } from "./helpers.ts";

const wellFormed = (s: string) => s.isWellFormed();
const name = fc.oneof(
  fc.constantFrom("a", "B_2", "_x", "and", "NULL", "in", "first name", 'say "hi"', "prénom", "a.b"),
  fc.string({ minLength: 1, maxLength: 6, unit: "binary" }).filter(wellFormed),
);
const attr = name.map((n) => ({ name: n, pos: 0 }));
const literal: fc.Arbitrary<Literal> = fc.oneof(
  fc
    .string({ maxLength: 8, unit: "binary" })
    .filter(wellFormed)
    .map((value) => ({ kind: "string" as const, value, pos: 0 })),
  fc
    .oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true }))
    .map((v) => (Object.is(v, -0) ? 0 : v))
    .map((value) => ({ kind: "number" as const, value, text: String(value), pos: 0 })),
  fc.boolean().map((value) => ({ kind: "boolean" as const, value, pos: 0 })),
  fc.constant({ kind: "null" as const, pos: 0 }),
  fc
    .constantFrom("g", "_apikey.user_identifier", "a-b.c_d")
    .map((n) => ({ kind: "global" as const, name: n, pos: 0 })),
);
const leaf: fc.Arbitrary<FilterNode> = fc.oneof(
  fc.record({
    type: fc.constant("compare" as const),
    attr,
    op: fc.constantFrom(
      "=" as const,
      "<>" as const,
      "<" as const,
      "<=" as const,
      ">" as const,
      ">=" as const,
    ),
    value: literal,
    upper: fc.constant(false),
    pos: fc.constant(0),
  }),
  fc.record({
    type: fc.constant("like" as const),
    attr,
    negated: fc.boolean(),
    pattern: fc
      .string({ maxLength: 8, unit: "binary" })
      .filter(wellFormed)
      .map((value) => ({ kind: "string" as const, value, pos: 0 })),
    upper: fc.constant(false),
    pos: fc.constant(0),
  }),
  fc.record({
    type: fc.constant("in" as const),
    attr,
    negated: fc.boolean(),
    values: fc.array(literal, { minLength: 1, maxLength: 4 }),
    pos: fc.constant(0),
  }),
  fc.record({ type: fc.constant("isNull" as const), attr, negated: fc.boolean(), pos: fc.constant(0) }),
);
const tree = fc.letrec<{ node: FilterNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.record({ type: fc.constant("not" as const), item: tie("node"), pos: fc.constant(0) }),
    fc.record({
      type: fc.constantFrom("and" as const, "or" as const),
      items: fc.array(tie("node"), { minLength: 2, maxLength: 4 }),
      pos: fc.constant(0),
    }),
  ),
})).node;

describe("query: printFilter / printOrder", () => {
  it("prints readable filter text", () => {
    const text =
      "a = 1 or b <> 'it''s' and not (c like 'x%' or \"first name\" is not null) and d not in (1, null, @{g})";
    expect(printFilter(parseFilter(text))).to.equal(text);
  });

  it("quotes names that need it", () => {
    expect(printFilter(parseFilter('"and" = 1 and "a b" = 2 and "x""y" = 3'))).to.equal(
      '"and" = 1 and "a b" = 2 and "x""y" = 3',
    );
  });

  it("parses back to the same AST (property)", () => {
    fc.assert(
      fc.property(tree, (ast) => {
        const text = printFilter(ast);
        fc.pre(text.length <= 4096);
        expect(strip(parseFilter(text)), text).to.deep.equal(strip(ast));
      }),
      { numRuns: 500 },
    );
  });

  it("refuses _uc nodes, which have no filter-language form", () => {
    expect(() =>
      printFilter({
        type: "compare",
        attr: { name: "a", pos: 0 },
        op: "=",
        value: { kind: "null", pos: 0 },
        upper: true,
        pos: 0,
      }),
    ).to.throw(/_uc/);
  });

  it("prints orderings that parse back", () => {
    const items = parseOrder('a desc, "b c", "desc" desc');
    expect(printOrder(items)).to.equal('a desc, "b c" asc, "desc" desc');
    expect(strip(parseOrder(printOrder(items)))).to.deep.equal(strip(items));
  });
});
