/**
 * The port's row filters in the store's MongoDB dialect: the read and write paths' filters keep
 * the exact shapes the store's indexes serve on MongoDB and on the patched FerretDB
 * (test/integration/data/ferretdb-pushdown.test.ts), and a change-feed row is matched in process
 * as the store would match it.
 */
import { expect } from "chai";
import type { TableModel } from "../../../services/data/src/domain/model/project-model.ts";
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
import { compileFilter, parseFilter } from "../../../services/data/src/query/index.ts";
import { rowMatcher, toMongoFilter } from "../../../services/data/src/store/mongo-filter.ts";

const table = (...key: string[]) => ({ key }) as TableModel;
const balanceOver = (n: number) =>
  clientFilter(
    compileFilter(parseFilter(`balance > ${n}`), { balance: { field: "balance", type: "number" } }),
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
    expect(toMongoFilter(afterKey(table("name"), ["Acme"]))).to.deep.equal({ name: { $gt: "Acme" } });
    expect(toMongoFilter(afterKey(table("order_no", "line_no"), [7, 2]))).to.deep.equal({
      $or: [{ order_no: { $gt: 7 } }, { order_no: { $eq: 7 }, line_no: { $gt: 2 } }],
    });
    expect(toMongoFilter(and([balanceOver(1), afterKey(table("name"), ["Acme"])]))).to.deep.equal({
      $and: [{ balance: { $gt: 1 } }, { name: { $gt: "Acme" } }],
    });
    expect(() => afterKey(table("order_no", "line_no"), [7])).to.throw(/paging position/);
  });

  it("every row is the empty query, in and out of an and; several row filters are one $or", () => {
    expect(toMongoFilter(and([]))).to.deep.equal({});
    expect(toMongoFilter(clientFilter({}))).to.deep.equal({});
    expect(toMongoFilter(or([balanceOver(1), balanceOver(2)]))).to.deep.equal({
      $or: [{ balance: { $gt: 1 } }, { balance: { $gt: 2 } }],
    });
  });

  it("matches a row in process as the store would, with the filter language's operators only", () => {
    const matches = rowMatcher(and([columnsEqual(["region"], ["EU"]), balanceOver(10)]));
    expect(matches({ _id: 1, _ck: "x", region: "EU", balance: 11 })).to.equal(true);
    expect(matches({ _id: 2, _ck: "x", region: "EU", balance: 10 })).to.equal(false);
    expect(matches({ _id: 3, _ck: "x", region: "US", balance: 11 })).to.equal(false);
    const code = clientFilter({ $where: "true" });
    expect(() => rowMatcher(code)({ _id: 1, _ck: "x" })).to.throw();
  });
});
