import { expect } from "chai";
import fc from "fast-check";
import {
  compileFilter,
  type FilterNode,
  LIMITS,
  matchNothing,
  parseFilter,
  parseSysfilter,
  type QuerySchema,
} from "../../../services/data/src/query/index.ts";
import { assertAllowedQuery, FIELD_OPERATORS } from "../../../services/data/src/query/query-guard.ts";
import { ApiError, ErrorCode } from "../../../shared/errors.ts";
import { expectBadFilter, show } from "./helpers.ts";

const schema: QuerySchema = {
  name: { field: "name", type: "string" },
  Name: { field: "cust_name", type: "string" },
  amount: { field: "amt", type: "number" },
  qty: { field: "qty", type: "integer" },
  paid: { field: "paid", type: "boolean" },
  born: { field: "born", type: "date" },
  seen: { field: "seen", type: "datetime" },
  bornD: { field: "born_d", type: "date", storedAs: "date" },
  seenD: { field: "seen_d", type: "datetime", storedAs: "date" },
  extra: { field: "extra", type: "json" },
  "first name": { field: "first", type: "string" },
};

const globals = {
  region: "EU",
  limit: 100,
  flag: true,
  "_apikey.user_identifier": "alice",
  user: { profile: { id: 7 } },
  nothing: null,
  list: [1, 2],
  when: new Date("2024-05-06T07:08:09.010Z"),
};

const NOTHING = { _id: { $in: [] } };

function q(text: string, g: Record<string, unknown> = globals): unknown {
  return show(compileFilter(parseFilter(text), schema, g));
}

function qs(text: string): unknown {
  return show(compileFilter(parseSysfilter(text), schema, globals));
}

describe("query: compileFilter", () => {
  describe("comparisons (T only where the predicate is TRUE)", () => {
    const cases: [string, unknown][] = [
      ["amount = 5", { amt: { $eq: 5 } }],
      ["amount <> 5", { amt: { $nin: [5, null] } }],
      ["amount != 5", { amt: { $nin: [5, null] } }],
      ["amount < 5", { amt: { $lt: 5 } }],
      ["amount <= 5", { amt: { $lte: 5 } }],
      ["amount > 5", { amt: { $gt: 5 } }],
      ["amount >= 5", { amt: { $gte: 5 } }],
      ["not amount = 5", { amt: { $nin: [5, null] } }],
      ["not amount <> 5", { amt: { $eq: 5 } }],
      ["not amount < 5", { amt: { $gte: 5 } }],
      ["not amount <= 5", { amt: { $gt: 5 } }],
      ["not amount > 5", { amt: { $lte: 5 } }],
      ["not amount >= 5", { amt: { $lt: 5 } }],
      ["not not amount = 5", { amt: { $eq: 5 } }],
      ["Name = 'x'", { cust_name: { $eq: "x" } }],
      ["\"first name\" = 'x'", { first: { $eq: "x" } }],
    ];
    for (const [text, expected] of cases) {
      it(text, () => expect(q(text)).to.deep.equal(expected));
    }
  });

  describe("null semantics", () => {
    const cases: [string, unknown][] = [
      ["amount = null", NOTHING],
      ["amount <> null", NOTHING],
      ["amount < null", NOTHING],
      ["not amount = null", NOTHING],
      ["amount is null", { amt: { $eq: null } }],
      ["amount is not null", { amt: { $ne: null } }],
      ["not amount is null", { amt: { $ne: null } }],
      ["not amount is not null", { amt: { $eq: null } }],
      ["extra is null", { extra: { $eq: null } }],
      ["amount = 1 and qty = null", NOTHING],
      ["amount = 1 or qty = null", { amt: { $eq: 1 } }],
      ["not (amount = 1 and qty = null)", { amt: { $nin: [1, null] } }],
      ["not (amount = 1 or qty = null)", NOTHING],
      ["qty = null or amount is null", { amt: { $eq: null } }],
    ];
    for (const [text, expected] of cases) {
      it(text, () => expect(q(text)).to.deep.equal(expected));
    }
  });

  describe("in", () => {
    const cases: [string, unknown][] = [
      ["qty in (1, 2)", { qty: { $in: [1, 2] } }],
      ["qty not in (1, 2)", { qty: { $nin: [1, 2, null] } }],
      ["not qty in (1, 2)", { qty: { $nin: [1, 2, null] } }],
      ["qty in (1, null)", { qty: { $in: [1] } }],
      ["qty not in (1, null)", NOTHING],
      ["not qty not in (1, null)", { qty: { $in: [1] } }],
      ["qty in (null)", NOTHING],
      ["qty not in (null)", NOTHING],
      ["qty in ('3', 4.5)", { qty: { $in: [3, 4.5] } }],
      ["name in ('$gt', '$where')", { name: { $in: ["$gt", "$where"] } }],
    ];
    for (const [text, expected] of cases) {
      it(text, () => expect(q(text)).to.deep.equal(expected));
    }
  });

  describe("like", () => {
    const cases: [string, unknown][] = [
      ["name like 'a%'", { name: { $regex: "^a[\\s\\S]*\\z" } }],
      ["name not like 'a%'", { name: { $nin: ["/^a[\\s\\S]*\\z/", null] } }],
      ["not name like 'a_'", { name: { $nin: ["/^a[\\s\\S]\\z/", null] } }],
      ["not name not like 'a'", { name: { $regex: "^a\\z" } }],
      ["name like '.*'", { name: { $regex: "^\\.\\*\\z" } }],
      ["name like '%(%'", { name: { $regex: "^[\\s\\S]*\\([\\s\\S]*\\z" } }],
      ["name like '\\'", { name: { $regex: "^\\\\\\z" } }],
      ["name like '[a-z]%'", { name: { $regex: "^\\[a\\-z\\][\\s\\S]*\\z" } }],
      ["name like '$where'", { name: { $regex: "^\\$where\\z" } }],
    ];
    for (const [text, expected] of cases) {
      it(text, () => expect(q(text)).to.deep.equal(expected));
    }

    it("puts a real RegExp (no flags) into $nin", () => {
      const query = compileFilter(parseFilter("name not like 'a%'"), schema, {}) as {
        name: { $nin: [RegExp, null] };
      };
      expect(query.name.$nin[0]).to.be.instanceOf(RegExp);
      expect(query.name.$nin[0].flags).to.equal("");
    });

    it("needs a string attribute", () => {
      expectBadFilter(() => q("amount like '1%'"), {
        position: 1,
        includes: "like needs a string attribute; 'amount' is a number",
      });
      expectBadFilter(() => q("qty like '1%'"), { includes: "is an integer" });
    });

    it(`limits '%' wildcards to ${LIMITS.maxLikeWildcards}`, () => {
      const ok = `name like '${"%a".repeat(LIMITS.maxLikeWildcards)}'`;
      expect(q(ok)).to.have.property("name");
      expectBadFilter(() => q(`name like '${"%a".repeat(LIMITS.maxLikeWildcards + 1)}'`), {
        position: 11,
        includes: `more than ${LIMITS.maxLikeWildcards} '%' wildcards`,
      });
      expect(q(`name like '${"%".repeat(100)}'`)).to.deep.equal({ name: { $regex: "^[\\s\\S]*\\z" } });
    });
  });

  describe("and / or / not", () => {
    it("builds $and and $or", () => {
      expect(q("amount = 1 and (qty = 2 or name = 'x')")).to.deep.equal({
        $and: [{ amt: { $eq: 1 } }, { $or: [{ qty: { $eq: 2 } }, { name: { $eq: "x" } }] }],
      });
    });

    it("pushes not down with De Morgan and three-valued logic", () => {
      expect(q("not (amount = 1 and qty < 2)")).to.deep.equal({
        $or: [{ amt: { $nin: [1, null] } }, { qty: { $gte: 2 } }],
      });
      expect(q("not (amount = 1 or name like 'a%')")).to.deep.equal({
        $and: [{ amt: { $nin: [1, null] } }, { name: { $nin: ["/^a[\\s\\S]*\\z/", null] } }],
      });
      expect(q("not (amount = 1 or not qty in (1, 2))")).to.deep.equal({
        $and: [{ amt: { $nin: [1, null] } }, { qty: { $in: [1, 2] } }],
      });
    });

    it("flattens nested conjunctions and disjunctions", () => {
      expect(q("(amount = 1 and qty = 2) and (paid = true and name = 'x')")).to.deep.equal({
        $and: [{ amt: { $eq: 1 } }, { qty: { $eq: 2 } }, { paid: { $eq: true } }, { name: { $eq: "x" } }],
      });
      expect(q("not (amount = 1 and (qty = 2 and paid = true))")).to.deep.equal({
        $or: [{ amt: { $nin: [1, null] } }, { qty: { $nin: [2, null] } }, { paid: { $nin: [true, null] } }],
      });
    });

    it("keeps the same field twice in separate clauses", () => {
      expect(q("amount > 1 and amount < 5")).to.deep.equal({
        $and: [{ amt: { $gt: 1 } }, { amt: { $lt: 5 } }],
      });
    });
  });

  describe("coercion to the attribute's type", () => {
    const cases: [string, unknown][] = [
      ["qty = '5'", { qty: { $eq: 5 } }],
      ["amount = '-2.5e1'", { amt: { $eq: -25 } }],
      ["amount = 1.5", { amt: { $eq: 1.5 } }],
      ["qty < 2.5", { qty: { $lt: 2.5 } }],
      ["name = 5", { name: { $eq: "5" } }],
      ["name = 5.0", { name: { $eq: "5.0" } }],
      ["name = -1e3", { name: { $eq: "-1e3" } }],
      ["paid = 'TRUE'", { paid: { $eq: true } }],
      ["paid = 0", { paid: { $eq: false } }],
      ["paid in (1, 'false')", { paid: { $in: [true, false] } }],
      ["born = '2024-02-29'", { born: { $eq: "2024-02-29" } }],
      ["seen > '2024-01-02T03:04:05.678Z'", { seen: { $gt: "2024-01-02T03:04:05.678Z" } }],
      ["seen > '2024-01-02T03:04:05.678'", { seen: { $gt: "2024-01-02T03:04:05.678Z" } }],
      ["seen > '2024-01-02 03:04'", { seen: { $gt: "2024-01-02T03:04:00.000Z" } }],
      ["seen > '2024-01-02'", { seen: { $gt: "2024-01-02T00:00:00.000Z" } }],
      ["seen > '2024-01-02T03:04:05.1234567+02:00'", { seen: { $gt: "2024-01-02T01:04:05.123Z" } }],
      ["seen > '0099-01-01T00:00:00Z'", { seen: { $gt: "0099-01-01T00:00:00.000Z" } }],
      ["bornD = '2024-02-29'", { born_d: { $eq: "2024-02-29T00:00:00.000Z" } }],
      ["seenD < '2024-01-02T03:04:05Z'", { seen_d: { $lt: "2024-01-02T03:04:05.000Z" } }],
      ["seen = @{when}", { seen: { $eq: "2024-05-06T07:08:09.010Z" } }],
      ["born = @{when}", { born: { $eq: "2024-05-06" } }],
    ];
    for (const [text, expected] of cases) {
      it(text, () => expect(q(text)).to.deep.equal(expected));
    }

    it("produces BSON-ready Date values for storedAs: date", () => {
      const query = compileFilter(parseFilter("seenD < '2024-01-02T03:04:05Z'"), schema, {}) as {
        seen_d: { $lt: Date };
      };
      expect(query.seen_d.$lt).to.be.instanceOf(Date);
    });

    const bad: [string, number, string][] = [
      ["qty = 'abc'", 7, "'abc' cannot be compared with integer attribute 'qty'"],
      ["qty = ''", 7, "'' cannot be compared"],
      ["qty = ' 5'", 7, "cannot be compared"],
      ["qty = true", 7, "true cannot be compared with integer attribute"],
      ["amount = '0x10'", 10, "cannot be compared"],
      ["amount = 'Infinity'", 10, "cannot be compared"],
      ["name = false", 8, "false cannot be compared with string attribute 'name'"],
      ["paid = 2", 8, "2 cannot be compared with boolean attribute"],
      ["paid = 'yes'", 8, "cannot be compared"],
      ["born = '2023-02-29'", 8, "cannot be compared with date attribute"],
      ["born = '2023-1-2'", 8, "cannot be compared"],
      ["born = 20230102", 8, "cannot be compared"],
      ["seen = '2023-01-02T25:00'", 8, "cannot be compared with datetime attribute"],
      ["seen = 'yesterday'", 8, "cannot be compared"],
      ["qty in (1, 'x')", 12, "'x' cannot be compared"],
      ["extra = 'x'", 1, "json attribute 'extra' can only be tested with 'is null' or 'is not null'"],
      ["extra = null", 1, "json attribute"],
      ["extra in (1)", 1, "json attribute"],
      ["extra like 'x'", 1, "like needs a string attribute"],
    ];
    for (const [text, position, message] of bad) {
      it(`rejects ${text}`, () => expectBadFilter(() => q(text), { position, includes: message }));
    }
  });

  describe("globals", () => {
    it("binds values, never pasting text", () => {
      expect(q("name = @{region}")).to.deep.equal({ name: { $eq: "EU" } });
      expect(q("name = @{region}", { region: "x' or name like '%" })).to.deep.equal({
        name: { $eq: "x' or name like '%" },
      });
      expect(q("name = @{region}", { region: "$where" })).to.deep.equal({ name: { $eq: "$where" } });
    });

    it("looks up flat dotted keys, then nested paths", () => {
      expect(q("name = @{_apikey.user_identifier}")).to.deep.equal({ name: { $eq: "alice" } });
      expect(q("qty = @{user.profile.id}")).to.deep.equal({ qty: { $eq: 7 } });
      expect(q("name = @{user.profile.id}")).to.deep.equal({ name: { $eq: "7" } });
    });

    it("coerces globals to the attribute's type", () => {
      expect(q("amount < @{limit}")).to.deep.equal({ amt: { $lt: 100 } });
      expect(q("qty in (@{limit}, 3)")).to.deep.equal({ qty: { $in: [100, 3] } });
      expect(q("paid = @{flag}")).to.deep.equal({ paid: { $eq: true } });
      expect(q("qty = @{n}", { n: 5n })).to.deep.equal({ qty: { $eq: 5 } });
      const msg = expectBadFilter(() => q("qty = @{region}"), {
        position: 7,
        includes: "the value of global @{region} cannot be compared with integer attribute 'qty'",
      });
      expect(msg).not.to.include("EU");
    });

    const forbidden: [string, string][] = [
      ["name = @{missing}", "required global missing has no value"],
      ["name = @{nothing}", "required global nothing has no value"],
      ["name = @{user.profile.nope}", "required global user.profile.nope has no value"],
      ["name = @{constructor}", "required global constructor has no value"],
      ["name = @{__proto__}", "required global __proto__ has no value"],
      ["name = @{region.length}", "required global region.length has no value"],
      ["name = @{user.constructor.name}", "required global user.constructor.name has no value"],
      ["qty in (1, @{list})", "global list has a value that cannot be used in a filter"],
      ["name = @{user}", "global user has a value that cannot be used in a filter"],
    ];
    for (const [text, message] of forbidden) {
      it(`${text} → 403/4031`, () => {
        let caught: unknown;
        try {
          q(text);
        } catch (error) {
          caught = error;
        }
        expect(caught).to.be.instanceOf(ApiError);
        expect((caught as ApiError).statusCode).to.equal(403);
        expect((caught as ApiError).errorCode).to.equal(ErrorCode.forbidden);
        expect((caught as ApiError).message).to.equal(message);
      });
    }

    it("does not need globals that are not referenced", () => {
      expect(compileFilter(parseFilter("qty = 1"), schema)).to.deep.equal({ qty: { $eq: 1 } });
    });
  });

  describe("case-insensitive sysfilters (_uc)", () => {
    const cases: [string, unknown][] = [
      ["equal_uc(name: 'Ab.c')", { name: { $regex: "^Ab\\.c\\z", $options: "i" } }],
      ["notequal_uc(name: 'ab')", { name: { $nin: ["/^ab\\z/i", null] } }],
      ["like_uc(name: 'a%')", { name: { $regex: "^a[\\s\\S]*\\z", $options: "i" } }],
      ["notlike_uc(name: 'a%')", { name: { $nin: ["/^a[\\s\\S]*\\z/i", null] } }],
      ["equal_uc(name: null)", { name: { $eq: null } }],
      ["equal_uc(name: 5)", { name: { $regex: "^5\\z", $options: "i" } }],
      ["equal_uc(amount: 5)", { amt: { $eq: 5 } }],
      ["less_uc(amount: 5)", { amt: { $lt: 5 } }],
      [
        "equal_uc_or(name: 'a', Name: 'b')",
        {
          $or: [
            { name: { $regex: "^a\\z", $options: "i" } },
            { cust_name: { $regex: "^b\\z", $options: "i" } },
          ],
        },
      ],
    ];
    for (const [text, expected] of cases) {
      it(text, () => expect(qs(text)).to.deep.equal(expected));
    }

    it("rejects ordering comparisons of text with _uc", () => {
      for (const op of ["less", "lessequal", "greater", "greaterequal"]) {
        expectBadFilter(() => qs(`${op}_uc(name: 'a')`), {
          position: op.length + 5,
          includes: ["Invalid sysfilter", `case-insensitive (_uc) ${op} comparison`],
        });
      }
    });
  });

  describe("attributes", () => {
    it("rejects unknown attributes with their position", () => {
      expectBadFilter(() => q("amount = 1 and nope = 2"), {
        position: 16,
        includes: "unknown attribute 'nope'",
      });
      expectBadFilter(() => q("NAME = 'x'"), { includes: "case-sensitive" });
    });

    it("never takes prototype properties for attributes", () => {
      for (const name of ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty"]) {
        expectBadFilter(() => q(`"${name}" = 1`), { position: 1, includes: `unknown attribute '${name}'` });
      }
    });

    it("names the parameter in messages", () => {
      expectBadFilter(() => qs("equal(nope: 1)"), { includes: "Invalid sysfilter at position 7" });
      expectBadFilter(() => compileFilter(parseFilter("nope = 1"), schema, {}, { label: "row filter" }), {
        includes: "Invalid row filter at position 1",
      });
    });

    it("refuses a schema field that could read as an operator (a server bug, not a client error)", () => {
      expect(() => compileFilter(parseFilter("x = 1"), { x: { field: "$where", type: "integer" } })).to.throw(
        Error,
        /unusable field name/,
      );
    });
  });

  describe("hostile values stay literal", () => {
    const cases: [string, unknown][] = [
      ["name = '$where'", { name: { $eq: "$where" } }],
      ["name = '$regex'", { name: { $eq: "$regex" } }],
      ['name = \'{"$gt": ""}\'', { name: { $eq: '{"$gt": ""}' } }],
      ["name <> '$ne'", { name: { $nin: ["$ne", null] } }],
      ["name = 'x'' or ''1''=''1'", { name: { $eq: "x' or '1'='1" } }],
      ["name like '%$where%'", { name: { $regex: "^[\\s\\S]*\\$where[\\s\\S]*\\z" } }],
    ];
    for (const [text, expected] of cases) {
      it(text, () => expect(q(text)).to.deep.equal(expected));
    }
  });

  it("expresses matching nothing with allow-listed operators", () => {
    expect(matchNothing()).to.deep.equal(NOTHING);
    expect(matchNothing()).not.to.equal(matchNothing());
  });

  it("only ever produces allow-listed queries over schema fields (property)", () => {
    const fields = new Set(Object.values(schema).map((a) => a.field));
    const attrNames = ["name", "Name", "amount", "qty", "paid", "first name"];
    const text = fc.string({ maxLength: 6 }).map((s) => `$${s}`);
    const literal = fc.oneof(
      text.map((value) => ({ kind: "string" as const, value, pos: 0 })),
      fc
        .constantFrom(1, -2.5, 0)
        .map((value) => ({ kind: "number" as const, value, text: String(value), pos: 0 })),
      fc.constant({ kind: "null" as const, pos: 0 }),
    );
    const leaf: fc.Arbitrary<FilterNode> = fc.oneof(
      fc.record({
        type: fc.constant("compare" as const),
        attr: fc.constantFrom(...attrNames).map((name) => ({ name, pos: 0 })),
        op: fc.constantFrom("=" as const, "<>" as const, "<" as const, ">=" as const),
        value: literal,
        upper: fc.constant(false),
        pos: fc.constant(0),
      }),
      fc.record({
        type: fc.constant("like" as const),
        attr: fc.constantFrom("name", "Name").map((name) => ({ name, pos: 0 })),
        negated: fc.boolean(),
        pattern: text.map((value) => ({ kind: "string" as const, value, pos: 0 })),
        upper: fc.boolean(),
        pos: fc.constant(0),
      }),
    );
    const tree = fc.letrec<{ node: FilterNode }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        leaf,
        fc.record({ type: fc.constant("not" as const), item: tie("node"), pos: fc.constant(0) }),
        fc.record({
          type: fc.constantFrom("and" as const, "or" as const),
          items: fc.array(tie("node"), { minLength: 2, maxLength: 3 }),
          pos: fc.constant(0),
        }),
      ),
    })).node;
    fc.assert(
      fc.property(tree, (ast) => {
        let query: Record<string, unknown>;
        try {
          query = compileFilter(ast, schema, {});
        } catch (error) {
          // only the client errors of the translator are acceptable (e.g. '$x' vs a number attribute)
          expect((error as ApiError).errorCode).to.equal(ErrorCode.badFilter);
          return;
        }
        assertAllowedQuery(query, fields);
        const keys: string[] = [];
        JSON.stringify(query, (key, v) => {
          if (key !== "" && !/^\d+$/.test(key)) keys.push(key);
          return v;
        });
        for (const key of keys) {
          expect(
            fields.has(key) || key === "_id" || key === "$and" || key === "$or" || FIELD_OPERATORS.has(key),
            key,
          ).to.be.true;
        }
      }),
      { numRuns: 300 },
    );
  });
});
