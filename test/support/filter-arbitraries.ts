/**
 * fast-check generators of filter-language ASTs (services/data/src/query/ast.ts) for the property
 * tests that check a filter's meaning against a reference: every operator of the language over the
 * attributes and values a test gives, nested under not / and / or.
 */
import fc from "fast-check";
import type { FilterNode, Literal } from "../../services/data/src/query/index.ts";

/** Positions do not matter to these tests. */
const P = 0;
const attrRef = (name: string) => ({ name, pos: P });

export interface LeafOptions {
  /** Attributes `=`, `<`, …, `in` may name (not json ones). */
  comparable: readonly string[];
  /** Attributes `like` may name (string ones). */
  text: readonly string[];
  /** Attributes `is null` may name. */
  all: readonly string[];
  /** A value to compare an attribute with. */
  literalFor: (attr: string) => fc.Arbitrary<Literal>;
  /** A like pattern. */
  pattern: fc.Arbitrary<string>;
  /** Weights of compare, like, in and is null (default 4, 3, 2, 1). */
  weights?: [number, number, number, number];
}

/** One comparison: `a op v`, `a [not] like 'p'`, `a [not] in (…)`, `a is [not] null`. */
export function leafNodes(o: LeafOptions): fc.Arbitrary<FilterNode> {
  const [wCompare, wLike, wIn, wNull] = o.weights ?? [4, 3, 2, 1];
  const compare = fc.constantFrom(...o.comparable).chain((a) =>
    fc.record({
      type: fc.constant("compare" as const),
      attr: fc.constant(attrRef(a)),
      op: fc.constantFrom(
        "=" as const,
        "<>" as const,
        "<" as const,
        "<=" as const,
        ">" as const,
        ">=" as const,
      ),
      value: o.literalFor(a),
      upper: fc.constant(false),
      pos: fc.constant(P),
    }),
  );
  const like = fc.record({
    type: fc.constant("like" as const),
    attr: fc.constantFrom(...o.text).map(attrRef),
    negated: fc.boolean(),
    pattern: o.pattern.map((value) => ({ kind: "string" as const, value, pos: P })),
    upper: fc.constant(false),
    pos: fc.constant(P),
  });
  const inList = fc.constantFrom(...o.comparable).chain((a) =>
    fc.record({
      type: fc.constant("in" as const),
      attr: fc.constant(attrRef(a)),
      negated: fc.boolean(),
      values: fc.array(o.literalFor(a), { minLength: 1, maxLength: 4 }),
      pos: fc.constant(P),
    }),
  );
  const isNull = fc.record({
    type: fc.constant("isNull" as const),
    attr: fc.constantFrom(...o.all).map(attrRef),
    negated: fc.boolean(),
    pos: fc.constant(P),
  });
  return fc.oneof(
    { weight: wCompare, arbitrary: compare },
    { weight: wLike, arbitrary: like },
    { weight: wIn, arbitrary: inList },
    { weight: wNull, arbitrary: isNull },
  );
}

/** Leaves nested under `not`, `and` and `or`. */
export function filterTrees(leaf: fc.Arbitrary<FilterNode>): fc.Arbitrary<FilterNode> {
  return fc.letrec<{ node: FilterNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.record({ type: fc.constant("not" as const), item: tie("node"), pos: fc.constant(P) }),
      fc.record({
        type: fc.constantFrom("and" as const, "or" as const),
        items: fc.array(tie("node"), { minLength: 2, maxLength: 3 }),
        pos: fc.constant(P),
      }),
    ),
  })).node;
}
