/**
 * Differential property test of Tessera's FerretDB patch (services/dev-stack/ferretdb.patch):
 * the same random documents go into the patched and the stock build, each with the same
 * indexes; random finds (filters on `_id`, indexed and non-indexed fields with mixed types,
 * missing fields and nulls; sorts with a unique tie-breaker; skips and limits) must return the
 * same documents in the same order from both. The stock build reads every document and applies
 * the whole query in Go, so it is the reference for MongoDB's semantics. Among them, Tessera's
 * page shapes (store/mongo-filter.ts): equality on an index's leading fields, a sort ending with
 * the unique `k`, a keyset position after a row, a limit; served by one compound index.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import fc from "fast-check";
import { BSON, type Document, type Filter, Long, MongoClient, ObjectId, type Sort } from "mongodb";
import { toMongoFilter } from "../../../services/data/src/store/mongo-filter.ts";
import {
  ferretdbBinary,
  ferretdbStockBinary,
  type StartedStore,
  startFerretdb,
} from "../../../services/dev-stack/src/stores.ts";

/** Values a field may hold: the ones the patch orders in SQL (null, numbers, strings) and others. */
const orderedValues: unknown[] = [
  null,
  -3,
  -1,
  0,
  -0,
  1,
  2,
  10,
  -1.5,
  0.5,
  2.5,
  9,
  2 ** 60,
  Long.fromString("1152921504606846976"),
  Long.fromString("-7"),
  "",
  "a",
  "A",
  "b",
  "ab",
  "10",
  "9",
  "é",
  "<a&b>",
  'q"t',
  "\u0000x",
];
const otherValues: unknown[] = [
  true,
  false,
  [],
  [1, "a"],
  [null],
  [2.5, -3],
  { x: 1 },
  new Date(0),
  new ObjectId("0123456789abcdef01234567"),
];
/** Documents with `_id`s of any type. */
type Row = { _id: string | number | ObjectId; [field: string]: unknown };
const MISSING = Symbol("missing");
const { EJSON } = BSON;

const fieldValue = (mixed: boolean) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant(MISSING) },
    { weight: 6, arbitrary: fc.constantFrom(...orderedValues) },
    { weight: mixed ? 3 : 0, arbitrary: fc.constantFrom(...otherValues) },
  );

/** `_id`s of mixed types, unique by construction (the row's number `k` is in each). */
const idOf = (k: number, form: number): unknown =>
  [k, `id<${k}>"é`, k + 0.5, new ObjectId(k.toString(16).padStart(24, "0")), -k - 1][form];

const documents = fc.boolean().chain((mixed) =>
  fc.array(fc.tuple(fc.nat(4), fieldValue(mixed), fieldValue(mixed), fieldValue(true)), {
    minLength: 0,
    maxLength: 40,
  }),
);

function toDocument([form, a, b, c]: [number, unknown, unknown, unknown], k: number): Row {
  const doc: Row = { _id: idOf(k, form) as Row["_id"], k };
  if (a !== MISSING) doc.a = a;
  if (b !== MISSING) doc.b = b;
  if (c !== MISSING) doc.c = c;
  return doc;
}

const queryValue = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...orderedValues) },
  { weight: 1, arbitrary: fc.constantFrom(...otherValues) },
);
const field = fc.constantFrom("a", "b", "c", "k");

const condition: fc.Arbitrary<Document> = fc.oneof(
  fc.tuple(field, queryValue).map(([f, v]) => ({ [f]: v })),
  fc.tuple(field, queryValue).map(([f, v]) => ({ [f]: { $eq: v } })),
  fc
    .tuple(field, fc.array(queryValue, { minLength: 1, maxLength: 4 }))
    .map(([f, vs]) => ({ [f]: { $in: vs } })),
  fc
    .tuple(field, fc.constantFrom("$gt", "$gte", "$lt", "$lte"), queryValue)
    .map(([f, op, v]) => ({ [f]: { [op]: v } })),
  fc.tuple(field, queryValue, queryValue).map(([f, low, high]) => ({ [f]: { $gte: low, $lt: high } })),
  fc.tuple(fc.nat(40), fc.nat(4)).map(([k, form]) => ({ _id: idOf(k, form) })),
  fc
    .array(fc.tuple(fc.nat(40), fc.nat(4)), { minLength: 1, maxLength: 4 })
    .map((ids) => ({ _id: { $in: ids.map(([k, form]) => idOf(k, form)) } })),
);

const filter: fc.Arbitrary<Document> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({}) },
  { weight: 4, arbitrary: condition },
  {
    weight: 2,
    arbitrary: fc
      .array(condition, { minLength: 1, maxLength: 3 })
      .map((parts) => Object.assign({}, ...parts)),
  },
  {
    weight: 2,
    arbitrary: fc.array(condition, { minLength: 1, maxLength: 3 }).map((parts) => ({ $and: parts })),
  },
  {
    weight: 2,
    arbitrary: fc.array(condition, { minLength: 1, maxLength: 3 }).map((parts) => ({ $or: parts })),
  },
);

/** A sort ends with the unique `k`, as Tessera's sorts end with the key: no ties. */
const sort: fc.Arbitrary<Sort | undefined> = fc.oneof(
  fc.constant(undefined),
  fc
    .array(fc.tuple(fc.constantFrom("a", "b", "c"), fc.constantFrom(1, -1)), { maxLength: 2 })
    .chain((pairs) =>
      fc.constantFrom(1, -1).map((dir) => Object.fromEntries([...pairs, ["k", dir]]) as Sort),
    ),
);

interface Query {
  filter: Filter<Row>;
  sort: Sort | undefined;
  skip: number;
  limit: number;
}

const randomQuery: fc.Arbitrary<Query> = fc.record({
  filter,
  sort,
  skip: fc.oneof(fc.constant(0), fc.nat(5)),
  limit: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 8 })),
});

/** Orders of Tessera's pages: the key (`k`), or indexed fields then the key. */
const pageOrders: [string, 1 | -1][][] = [
  [["k", 1]],
  [["k", -1]],
  [
    ["a", 1],
    ["k", 1],
  ],
  [
    ["b", -1],
    ["k", 1],
  ],
  [
    ["a", -1],
    ["k", 1],
  ],
];

/**
 * A page as Tessera asks for one: equalities on fields (leading ones of the compound indexes
 * among them), in the order, after a keyset position (the query Tessera makes of it), limited.
 */
const pageQuery: fc.Arbitrary<Query> = fc
  .record({
    equal: fc.uniqueArray(fc.tuple(fc.constantFrom("a", "b", "c"), queryValue), {
      maxLength: 2,
      selector: ([f]) => f,
    }),
    order: fc.constantFrom(...pageOrders),
    after: fc.option(fc.tuple(queryValue, fc.nat(40)), { nil: undefined }),
    limit: fc.integer({ min: 1, max: 8 }),
  })
  .map(({ equal, order, after, limit }) => {
    const parts: Document[] = equal.map(([f, v]) => ({ [f]: { $eq: v } }));
    if (after) {
      const values = order.length === 1 ? [after[1]] : [after[0], after[1]];
      const afterKey = {
        op: "afterKey" as const,
        columns: order.map(([f]) => f),
        values,
        directions: order.map(([, d]) => d),
      };
      parts.push(toMongoFilter(afterKey));
    }
    const filter = parts.length === 0 ? {} : parts.length === 1 ? parts[0]! : { $and: parts };
    return { filter, sort: Object.fromEntries(order) as Sort, skip: 0, limit };
  });

const query: fc.Arbitrary<Query> = fc.oneof({ weight: 2, arbitrary: randomQuery }, pageQuery);

/** Few values of `c` (so that equality on it finds several documents), others as in `documents`. */
const FEW = ["EU", "US", 1, null];
const pageDocuments = fc
  .boolean()
  .chain((mixed) =>
    fc.array(
      fc.tuple(
        fc.nat(4),
        fieldValue(true),
        fieldValue(mixed),
        fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...FEW) }, fieldValue(mixed)),
      ),
      { maxLength: 40 },
    ),
  );
const fewPageQuery: fc.Arbitrary<Query> = fc
  .tuple(pageQuery, fc.constantFrom(...FEW))
  .map(([q, c]) => ({ ...q, filter: { $and: [{ c: { $eq: c } }, q.filter] } }));

describe("FerretDB patch: pushdowns answer as the stock build does", function () {
  this.timeout(600_000);
  let dir: string;
  let stores: StartedStore[] = [];
  let patched: MongoClient;
  let stock: MongoClient;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-ferretdb-diff-"));
    stores = await Promise.all([
      startFerretdb(path.join(dir, "patched"), () => {}, ferretdbBinary),
      startFerretdb(path.join(dir, "stock"), () => {}, ferretdbStockBinary),
    ]);
    patched = await MongoClient.connect(stores[0]!.url);
    stock = await MongoClient.connect(stores[1]!.url);
  });

  after(async () => {
    await patched?.close();
    await stock?.close();
    await Promise.all(stores.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  let collections = 0;

  /** The same documents and indexes in both builds. */
  async function load(docs: Row[]): Promise<string> {
    const name = `c${collections++}`;
    for (const client of [patched, stock]) {
      const coll = client.db("diff").collection<Row>(name);
      await coll.createIndexes([
        // `a` only follows `c` in an index: usable where the filter fixes `c`
        { key: { b: -1, k: 1 }, name: "b_k" },
        { key: { k: 1 }, name: "k", unique: true },
        { key: { c: 1, k: 1 }, name: "c_k" },
        { key: { c: 1, a: 1, k: 1 }, name: "c_a_k" },
      ]);
      if (docs.length > 0) await coll.insertMany(docs);
    }
    return name;
  }

  async function findIn(client: MongoClient, name: string, q: Query): Promise<string> {
    const docs = await client
      .db("diff")
      .collection<Row>(name)
      .find(q.filter, { sort: q.sort, skip: q.skip, limit: q.limit })
      .toArray();
    return EJSON.stringify(docs, { relaxed: false });
  }

  it("returns the same documents in the same order for random finds", async () => {
    await fc.assert(
      fc.asyncProperty(documents, fc.array(query, { minLength: 1, maxLength: 12 }), async (rows, queries) => {
        const name = await load(rows.map(toDocument));
        for (const q of queries) {
          const [mine, theirs] = await Promise.all([findIn(patched, name, q), findIn(stock, name, q)]);
          expect(mine, EJSON.stringify(q)).to.equal(theirs);
        }
      }),
      { numRuns: 120 },
    );
  });

  it("returns the same pages for equality on a compound index's leading field (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        pageDocuments,
        fc.array(fewPageQuery, { minLength: 1, maxLength: 12 }),
        async (rows, queries) => {
          const name = await load(rows.map(toDocument));
          for (const q of queries) {
            const [mine, theirs] = await Promise.all([findIn(patched, name, q), findIn(stock, name, q)]);
            expect(mine, EJSON.stringify(q)).to.equal(theirs);
          }
        },
      ),
      { numRuns: 80 },
    );
  });

  it("reads a page in index order through the index: filter, sort and limit pushed down", async () => {
    const name = await load(Array.from({ length: 50 }, (_, k) => ({ _id: k, k, a: `n${k % 5}` })));
    const explained = await patched
      .db("diff")
      .collection<Row>(name)
      .find({ k: { $gt: 10 } }, { sort: { k: 1 }, limit: 21 })
      .explain();
    expect(explained).to.include({ filterPushdown: true, sortPushdown: true, limitPushdown: true });
    expect(JSON.stringify(explained.queryPlanner)).to.match(/USING INDEX \S+_k /);
  });

  it("reads a page of the equal ones in key order, and the next, by one range of a compound index", async () => {
    const name = await load(
      Array.from({ length: 200 }, (_, k) => ({ _id: k, k, a: `n${k % 7}`, c: ["EU", "US"][k % 2] })),
    );
    const coll = patched.db("diff").collection<Row>(name);
    const pages = [
      { c: { $eq: "EU" } },
      { $and: [{ c: { $eq: "EU" } }, { k: { $gt: 40 } }] },
      { $and: [{ c: { $eq: "US" } }, { a: { $eq: "n3" } }, { k: { $gt: 40 } }] },
    ];
    for (const filter of pages) {
      const explained = await coll.find(filter, { sort: { k: 1 }, limit: 21 }).explain();
      expect(explained, JSON.stringify(filter)).to.include({
        filterPushdown: true,
        sortPushdown: true,
        limitPushdown: true,
      });
      const plan = JSON.stringify(explained.queryPlanner);
      expect(plan, JSON.stringify(filter)).to.match(/USING INDEX \S+_c_(a_)?k /);
      expect(plan, JSON.stringify(filter)).not.to.match(/TEMP B-TREE/);
    }
    // a field that follows an equality in a compound index: sorted by the index, not in Go
    const byA = await coll
      .find(
        {
          $and: [
            { c: { $eq: "EU" } },
            toMongoFilter({ op: "afterKey", columns: ["a", "k"], values: ["n2", 9] }),
          ],
        },
        {
          sort: { a: 1, k: 1 },
          limit: 5,
        },
      )
      .explain();
    expect(byA).to.include({ filterPushdown: true, sortPushdown: true, limitPushdown: true });
    expect(JSON.stringify(byA.queryPlanner)).to.match(/USING INDEX \S+_c_a_k /);
    expect(JSON.stringify(byA.queryPlanner), "by a").not.to.match(/TEMP B-TREE/);
  });

  it("finds by `_id` through the `_id` index whatever else the filter says", async () => {
    const name = await load(Array.from({ length: 50 }, (_, k) => ({ _id: k, k, ck: `c${k}` })));
    const explained = await patched.db("diff").collection<Row>(name).find({ _id: 7, ck: "c7" }).explain();
    expect(explained).to.include({ filterPushdown: true });
    expect(JSON.stringify(explained.queryPlanner)).to.match(/USING INDEX \S+__id_ /);
  });

  it("opens a database the stock build made and remakes its indexes for the pushdowns", async () => {
    const stateDir = path.join(dir, "made-by-stock");
    const docs = Array.from({ length: 30 }, (_, k) => ({ _id: `r${k}`, k, a: k % 3 }));
    const before = await startFerretdb(stateDir, () => {}, ferretdbStockBinary);
    const client = await MongoClient.connect(before.url);
    await client.db("old").collection<Row>("t").createIndex({ k: 1 }, { name: "k" });
    await client.db("old").collection<Row>("t").insertMany(docs);
    await client.close();
    await before.stop();

    const after = await startFerretdb(stateDir, () => {}, ferretdbBinary);
    stores.push(after);
    const reopened = await MongoClient.connect(after.url);
    try {
      const coll = reopened.db("old").collection<Row>("t");
      expect(await coll.find({ k: { $gte: 27 } }, { sort: { k: -1 } }).toArray()).to.deep.equal(
        docs.slice(27).reverse(),
      );
      expect(await coll.findOne({ _id: "r5" })).to.deep.equal(docs[5]);
      const explained = await coll.find({ k: { $gte: 27 } }, { sort: { k: -1 }, limit: 2 }).explain();
      expect(explained).to.include({ filterPushdown: true, sortPushdown: true, limitPushdown: true });
      expect(JSON.stringify(explained.queryPlanner)).to.match(/USING INDEX \S+_k /);
    } finally {
      await reopened.close();
    }
  });
});
