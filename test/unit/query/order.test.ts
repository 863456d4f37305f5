import { expect } from "chai";
import {
  compileOrder,
  LIMITS,
  parseOrder,
  parseSysorder,
  type QuerySchema,
} from "../../../services/data/src/query/index.ts";
import { expectBadFilter, strip } from "./helpers.ts";

const schema: QuerySchema = {
  Name: { field: "name", type: "string" },
  Balance: { field: "balance", type: "number" },
  Count: { field: "n", type: "integer" },
  Paid: { field: "paid", type: "boolean" },
  Extra: { field: "extra", type: "json" },
  AlsoName: { field: "name", type: "string" },
  "first name": { field: "first_name", type: "string" },
};

describe("query: parseOrder", () => {
  it("parses names with optional, case-insensitive directions", () => {
    expect(strip(parseOrder("Name"))).to.deep.equal([{ attr: { name: "Name" }, direction: "asc" }]);
    expect(strip(parseOrder("Name DESC, Balance asc ,Count"))).to.deep.equal([
      { attr: { name: "Name" }, direction: "desc" },
      { attr: { name: "Balance" }, direction: "asc" },
      { attr: { name: "Count" }, direction: "asc" },
    ]);
  });

  it("accepts quoted names (also ones called asc) and keywords as names", () => {
    expect(strip(parseOrder('"first name" desc'))).to.deep.equal([
      { attr: { name: "first name" }, direction: "desc" },
    ]);
    expect(strip(parseOrder('"desc" desc'))).to.deep.equal([{ attr: { name: "desc" }, direction: "desc" }]);
    expect(strip(parseOrder("in desc"))).to.deep.equal([{ attr: { name: "in" }, direction: "desc" }]);
  });

  it("records positions and the parameter", () => {
    const [, second] = parseOrder("a, b desc");
    expect(second!.attr.pos).to.equal(3);
    expect(second!.source).to.equal("order");
  });

  it("rejects malformed orderings with positions", () => {
    expectBadFilter(() => parseOrder(""), { includes: "empty" });
    expectBadFilter(() => parseOrder("Name sideways"), {
      position: 6,
      includes: "expected 'asc', 'desc', ','",
    });
    expectBadFilter(() => parseOrder("Name,"), { position: 6, includes: "expected an attribute name" });
    expectBadFilter(() => parseOrder(", Name"), { position: 1, includes: "expected an attribute name" });
    expectBadFilter(() => parseOrder("Name desc desc"), { position: 11 });
    expectBadFilter(() => parseOrder("Name; drop"), { position: 5, includes: "';'" });
    expectBadFilter(() => parseOrder("'Name'"), {
      position: 1,
      includes: "expected an attribute name, found string",
    });
    const many = Array.from({ length: LIMITS.maxOrderKeys + 1 }, () => "a").join(",");
    expectBadFilter(() => parseOrder(many), { includes: `more than ${LIMITS.maxOrderKeys}` });
  });
});

describe("query: parseSysorder", () => {
  it("parses every modifier", () => {
    expect(
      strip(
        parseSysorder(
          "(a, b:asc, c:DESC, d:asc_uc, e:desc_uc, f:asc_lc, g:desc_lc, h:null_first, i:null_last)",
        ),
      ),
    ).to.deep.equal([
      { attr: { name: "a" }, direction: "asc" },
      { attr: { name: "b" }, direction: "asc" },
      { attr: { name: "c" }, direction: "desc" },
      { attr: { name: "d" }, direction: "asc", fold: "upper" },
      { attr: { name: "e" }, direction: "desc", fold: "upper" },
      { attr: { name: "f" }, direction: "asc", fold: "lower" },
      { attr: { name: "g" }, direction: "desc", fold: "lower" },
      { attr: { name: "h" }, direction: "asc", nulls: "first" },
      { attr: { name: "i" }, direction: "asc", nulls: "last" },
    ]);
  });

  it("accepts the form without parentheses and quoted names", () => {
    expect(strip(parseSysorder("a:desc, 'b c'"))).to.deep.equal([
      { attr: { name: "a" }, direction: "desc" },
      { attr: { name: "b c" }, direction: "asc" },
    ]);
  });

  it("rejects malformed orderings with positions", () => {
    expectBadFilter(() => parseSysorder("()"), { position: 2, includes: "expected an attribute name" });
    expectBadFilter(() => parseSysorder("(a:up)"), { position: 4, includes: "unknown modifier 'up'" });
    expectBadFilter(() => parseSysorder("(a:constructor)"), { position: 4, includes: "unknown modifier" });
    expectBadFilter(() => parseSysorder("(a:)"), { position: 4, includes: "expected one of asc, desc" });
    expectBadFilter(() => parseSysorder("(a, b"), { position: 6, includes: "expected ',' or ')'" });
    expectBadFilter(() => parseSysorder("(a) b"), { position: 5, includes: "expected the end" });
    expectBadFilter(() => parseSysorder("a desc"), { position: 3, includes: "expected the end" });
    expectBadFilter(() => parseSysorder(""), { includes: "empty" });
  });
});

describe("query: compileOrder", () => {
  it("maps attributes to stored fields and directions", () => {
    expect(compileOrder(parseOrder("Name desc, Balance, Paid desc"), schema)).to.deep.equal([
      ["name", -1],
      ["balance", 1],
      ["paid", -1],
    ]);
  });

  it("drops later keys on a field already ordered by (also through aliases)", () => {
    expect(compileOrder(parseOrder("Name desc, Balance, AlsoName asc, Name"), schema)).to.deep.equal([
      ["name", -1],
      ["balance", 1],
    ]);
  });

  it("treats null_first as ascending (MongoDB sorts nulls first ascending)", () => {
    expect(compileOrder(parseSysorder("(Balance:null_first)"), schema)).to.deep.equal([["balance", 1]]);
  });

  it("ignores case folding on non-text attributes", () => {
    expect(compileOrder(parseSysorder("(Balance:desc_uc, Count:asc_lc)"), schema)).to.deep.equal([
      ["balance", -1],
      ["n", 1],
    ]);
  });

  it("rejects what it cannot express, naming the parameter and position", () => {
    expectBadFilter(() => compileOrder(parseSysorder("(Balance, Name:asc_uc)"), schema), {
      position: 11,
      includes: ["Invalid sysorder", "case-insensitive ordering (asc_uc)", "use asc"],
    });
    expectBadFilter(() => compileOrder(parseSysorder("(Name:desc_lc)"), schema), { includes: "desc_lc" });
    expectBadFilter(() => compileOrder(parseSysorder("(Balance:null_last)"), schema), {
      includes: "null_last",
    });
    expectBadFilter(() => compileOrder(parseOrder("Extra"), schema), { includes: "json attribute 'Extra'" });
  });

  it("rejects unknown attributes, also prototype names", () => {
    expectBadFilter(() => compileOrder(parseOrder("Balance, nope"), schema), {
      position: 10,
      includes: ["Invalid order", "unknown attribute 'nope'"],
    });
    expectBadFilter(() => compileOrder(parseOrder("name"), schema), { includes: "did you mean 'Name'" });
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      expectBadFilter(() => compileOrder(parseOrder(name), schema), {
        includes: `unknown attribute '${name}'`,
      });
    }
  });

  it("accepts a label for messages", () => {
    expectBadFilter(() => compileOrder(parseOrder("x"), schema, { label: "resource order" }), {
      includes: "Invalid resource order",
    });
  });
});
