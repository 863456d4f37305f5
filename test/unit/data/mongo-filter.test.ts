/**
 * The port's row filters in the store's MongoDB dialect: the read and write paths' filters keep
 * the exact shapes the store's indexes serve on MongoDB and on the patched FerretDB
 * (test/integration/data/ferretdb-pushdown.test.ts), and a change-feed row is matched in process
 * as the store would match it.
 */
import { expect } from "chai";
import { afterKey } from "../../../services/data/src/domain/read/query-builder.ts";
import {
  ALL_ROWS,
  and,
  byId,
  byIds,
  clientFilter,
  columnsEqual,
  or,
} from "../../../services/data/src/domain/read/row-filters.ts";
import { compileCondition, parseFilter } from "../../../services/data/src/query/index.ts";
import { rowMatcher, toMongoFilter } from "../../../services/data/src/store/mongo-filter.ts";

const keyOrder = (...key: string[]): [string, 1 | -1][] => key.map((k) => [k, 1]);
const balanceOver = (n: number) =>
  clientFilter(
    compileCondition(parseFilter(`balance > ${n}`), { balance: { field: "balance", type: "number" } }),
  );

describe("row filters in MongoDB's dialect", () => {
  it("a row by key, alone or under a filter", () => {
    expect(toMongoFilter(byId("Acme"))).to.deep.equal({ _id: "Acme" });
    expect(toMongoFilter(and([byId("Acme"), ALL_ROWS]))).to.deep.equal({ _id: "Acme" });
    expect(toMongoFilter(and([byId("Acme"), balanceOver(10)]))).to.deep.equal({
      $and: [{ _id: "Acme" }, { balance: { $gt: 10 } }],
    });
  });

  it("rows by key: one $in on _id (a page's parents, a plan's missing rows)", () => {
    expect(toMongoFilter(byIds([1, "[1,2]"]))).to.deep.equal({ _id: { $in: [1, "[1,2]"] } });
  });

  it("a lookup by named columns: one document of $eq", () => {
    expect(toMongoFilter(columnsEqual(["email", "region"], ["a@b.c", "EU"]))).to.deep.equal({
      email: { $eq: "a@b.c" },
      region: { $eq: "EU" },
    });
  });

  it("keyset paging: $gt on a one-column key, else equal on the leading columns and greater on the next", () => {
    expect(toMongoFilter(afterKey(keyOrder("name"), ["Acme"]))).to.deep.equal({ name: { $gt: "Acme" } });
    expect(toMongoFilter(afterKey(keyOrder("order_no", "line_no"), [7, 2]))).to.deep.equal({
      $and: [
        { order_no: { $gte: 7 } },
        { $or: [{ order_no: { $gt: 7 } }, { order_no: { $eq: 7 }, line_no: { $gt: 2 } }] },
      ],
    });
    expect(toMongoFilter(and([balanceOver(1), afterKey(keyOrder("name"), ["Acme"])]))).to.deep.equal({
      $and: [{ balance: { $gt: 1 } }, { name: { $gt: "Acme" } }],
    });
    expect(() => afterKey(keyOrder("order_no", "line_no"), [7])).to.throw(/paging position/);
    expect(() => afterKey(keyOrder("order_no", "line_no"), [7, null])).to.throw(/paging position/);
  });

  it("keyset paging in an order with descending columns: before on those, a range on the first", () => {
    const sort: [string, 1 | -1][] = [
      ["placed", -1],
      ["id", 1],
    ];
    expect(toMongoFilter(afterKey(sort, [5, "o9"]))).to.deep.equal({
      $and: [
        { placed: { $lte: 5 } },
        { $or: [{ placed: { $lt: 5 } }, { placed: { $eq: 5 }, id: { $gt: "o9" } }] },
      ],
    });
    const next = rowMatcher(afterKey(sort, [5, "o9"]));
    const row = (placed: number, id: string) => ({ _id: id, _ck: "x", placed, id });
    expect([row(4, "o1"), row(5, "p"), row(5, "o9"), row(6, "o0"), row(5, "o1")].map(next)).to.deep.equal([
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it("every row is the empty query, in and out of an and; several row filters are one $or", () => {
    expect(toMongoFilter(and([]))).to.deep.equal({});
    expect(toMongoFilter(clientFilter({ query: {}, test: () => true }))).to.deep.equal({});
    expect(toMongoFilter(or([balanceOver(1), balanceOver(2)]))).to.deep.equal({
      $or: [{ balance: { $gt: 1 } }, { balance: { $gt: 2 } }],
    });
  });

  it("matches a row in process as the store would: every shape, with the store's value rules", () => {
    const matches = rowMatcher(and([columnsEqual(["region"], ["EU"]), balanceOver(10)]));
    expect(matches({ _id: 1, _ck: "x", region: "EU", balance: 11 })).to.equal(true);
    expect(matches({ _id: 2, _ck: "x", region: "EU", balance: 10 })).to.equal(false);
    expect(matches({ _id: 3, _ck: "x", region: "US", balance: 11 })).to.equal(false);
    // a number is never greater than a string (type bracketing), a missing column equals nothing
    expect(matches({ _id: 4, _ck: "x", region: "EU", balance: "11" })).to.equal(false);
    expect(rowMatcher(columnsEqual(["region"], ["EU"]))({ _id: 5, _ck: "x" })).to.equal(false);
    const row = (id: unknown, extra: Record<string, unknown> = {}) =>
      ({ _id: id, _ck: "x", ...extra }) as never;
    expect(rowMatcher(byId(7))(row(7))).to.equal(true);
    expect(rowMatcher(byId(7))(row("7"))).to.equal(false);
    expect(rowMatcher(byIds([1, "[1,2]"]))(row("[1,2]"))).to.equal(true);
    expect(rowMatcher(or([byId(1), byId(2)]))(row(3))).to.equal(false);
    const after = rowMatcher(afterKey(keyOrder("order_no", "line_no"), [7, 2]));
    expect(
      [row(1, { order_no: 7, line_no: 3 }), row(2, { order_no: 8, line_no: 0 })].map(after),
    ).to.deep.equal([true, true]);
    expect(
      [row(3, { order_no: 7, line_no: 2 }), row(4, { order_no: 6, line_no: 9 })].map(after),
    ).to.deep.equal([false, false]);
    // strings by code point: U+1F600 sorts after U+FF71, although its first UTF-16 unit does not
    const afterName = rowMatcher(afterKey(keyOrder("name"), ["\uff71"]));
    expect(afterName(row(5, { name: "😀" }))).to.equal(true);
  });
});
