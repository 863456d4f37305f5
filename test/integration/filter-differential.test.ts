/**
 * Differential property test of the query language: random rows go into a real
 * MongoDB-wire store (FerretDB by default) and into SQLite; random filters are
 * printed to text, parsed and compiled by our module and run on the store, while
 * an independent, test-only translation of the same AST to SQL (bound parameters)
 * runs in SQLite. SQLite is the reference for SQL semantics: three-valued logic,
 * LIKE (with PRAGMA case_sensitive_like = ON), IN with NULLs, NULL ordering.
 */
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { expect } from "chai";
import fc from "fast-check";
import { type Collection, MongoClient } from "mongodb";
import {
  type AttributeType,
  compileFilter,
  compileOrder,
  type FilterNode,
  type Literal,
  type OrderItem,
  parseFilter,
  parseOrder,
  parseSysfilter,
  printFilter,
  printOrder,
  type QuerySchema,
} from "../../services/data/src/query/index.ts";
import { filterTrees, leafNodes } from "../support/filter-arbitraries.ts";
import { isolationPrefix, testStores } from "../support/stores.ts";

// ---------------------------------------------------------------------------
// The table: attribute → stored field / SQL column, and type.

const columns = {
  qty: { field: "q", type: "integer" },
  price: { field: "p", type: "number" },
  label: { field: "s", type: "string" },
  flag: { field: "b", type: "boolean" },
  "Note Text": { field: "note", type: "string" },
} as const satisfies QuerySchema;
type Attr = keyof typeof columns;
const schema: QuerySchema = columns;
const attrs = Object.keys(columns) as Attr[];
const stringAttrs: Attr[] = ["label", "Note Text"];

const globals: Record<string, unknown> = { g_label: "a%", g_num: 2, g_flag: true };

type Cell = { kind: "missing" } | { kind: "null" } | { kind: "value"; value: number | string | boolean };
type Row = { id: number } & Record<Attr, Cell>;

// ---------------------------------------------------------------------------
// Generators.

const FULL_ALPHABET = [
  "a",
  "A",
  "b",
  "B",
  "%",
  "_",
  ".",
  "*",
  "(",
  "[",
  "\\",
  "$",
  "^",
  "'",
  '"',
  "\n",
  "é",
  "É",
  "😀",
  " ",
];
const ASCII_ALPHABET = ["a", "A", "b", "B", "%", "_", ".", "*", "(", "[", "\\", "$", "'", "\n", " "];

const textOf = (alphabet: string[], maxLength: number) =>
  fc.array(fc.constantFrom(...alphabet), { maxLength }).map((cs) => cs.join(""));

const intValue = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -3, max: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: -(2 ** 40), max: 2 ** 40 }) },
);
const numValue = fc
  .oneof(
    { weight: 4, arbitrary: fc.constantFrom(-1.5, 0, 0.5, 1, 2, 2.25, 3) },
    { weight: 1, arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true }) },
  )
  .map((v) => (Object.is(v, -0) ? 0 : v));

function cell<T extends number | string | boolean>(value: fc.Arbitrary<T>): fc.Arbitrary<Cell> {
  return fc.oneof(
    { weight: 6, arbitrary: value.map((v) => ({ kind: "value" as const, value: v })) },
    { weight: 1, arbitrary: fc.constant({ kind: "null" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "missing" as const }) },
  );
}

function rowsArb(alphabet: string[]): fc.Arbitrary<Row[]> {
  const row = fc.record({
    qty: cell(intValue),
    price: cell(numValue),
    label: cell(textOf(alphabet, 4)),
    flag: cell(fc.boolean()),
    "Note Text": cell(textOf(alphabet, 3)),
  });
  return fc
    .array(row, { minLength: 1, maxLength: 25 })
    .map((rows) => rows.map((r, i) => ({ id: i + 1, ...r })));
}

const P = 0;
const str = (value: string): Literal => ({ kind: "string", value, pos: P });
const num = (value: number): Literal => ({ kind: "number", value, text: String(value), pos: P });
const nul: Literal = { kind: "null", pos: P };
const glob = (name: string): Literal => ({ kind: "global", name, pos: P });

/** A value for `attr`, sometimes in a form that needs coercion, sometimes null or a global. */
function literalFor(attr: Attr, alphabet: string[]): fc.Arbitrary<Literal> {
  const type = columns[attr].type;
  const common = [
    { weight: 1, arbitrary: fc.constant(nul) },
    {
      weight: 1,
      arbitrary: fc.constant(glob(type === "boolean" ? "g_flag" : type === "string" ? "g_label" : "g_num")),
    },
  ];
  switch (type) {
    case "integer":
    case "number":
      return fc.oneof(
        { weight: 8, arbitrary: (type === "integer" ? fc.oneof(intValue, numValue) : numValue).map(num) },
        { weight: 2, arbitrary: numValue.map((v) => str(String(v))) },
        ...common,
      );
    case "string":
      return fc.oneof(
        { weight: 8, arbitrary: textOf(alphabet, 4).map(str) },
        { weight: 1, arbitrary: fc.integer({ min: -3, max: 3 }).map(num) },
        { weight: 1, arbitrary: fc.constant(glob("g_num")) },
        ...common,
      );
    case "boolean":
      return fc.oneof(
        { weight: 6, arbitrary: fc.boolean().map((value): Literal => ({ kind: "boolean", value, pos: P })) },
        { weight: 1, arbitrary: fc.constantFrom("true", "FALSE", "True").map(str) },
        { weight: 1, arbitrary: fc.constantFrom(0, 1).map(num) },
        ...common,
      );
  }
}

const attrRef = (name: Attr) => ({ name, pos: P });
function filterArb(alphabet: string[]): fc.Arbitrary<FilterNode> {
  return filterTrees(
    leafNodes({
      comparable: attrs,
      text: stringAttrs,
      all: attrs,
      literalFor: (a) => literalFor(a as Attr, alphabet),
      pattern: textOf([...alphabet, "%", "%", "_"], 5),
    }),
  );
}

const orderArb: fc.Arbitrary<OrderItem[]> = fc
  .uniqueArray(fc.constantFrom(...attrs), { minLength: 1, maxLength: 3 })
  .chain((names) =>
    fc.tuple(
      ...names.map((name) =>
        fc.constantFrom("asc" as const, "desc" as const).map((direction) => ({
          attr: attrRef(name),
          direction,
        })),
      ),
    ),
  );

// ---------------------------------------------------------------------------
// The test-only SQL translation (independent of the Mongo translator).

const sqlColumn = (name: string) => columns[name as Attr].field;

function globalLiteral(name: string): Literal {
  const value = globals[name];
  if (typeof value === "string") return str(value);
  if (typeof value === "number") return num(value);
  if (typeof value === "boolean") return { kind: "boolean", value, pos: P };
  throw new Error(`test global ${name}`);
}

/** The SQL parameter for a literal compared with a column of `type`; null for NULL. */
function sqlValue(literal: Literal, type: AttributeType): SQLInputValue {
  const lit = literal.kind === "global" ? globalLiteral(literal.name) : literal;
  if (lit.kind === "null") return null;
  switch (type) {
    case "integer":
    case "number":
      return lit.kind === "number" ? lit.value : Number((lit as { value: string }).value);
    case "string":
      return lit.kind === "number" ? lit.text : String((lit as { value: string }).value);
    case "boolean":
      if (lit.kind === "boolean") return lit.value ? 1 : 0;
      if (lit.kind === "number") return lit.value;
      return String((lit as { value: string }).value).toLowerCase() === "true" ? 1 : 0;
    default:
      throw new Error(`no SQL for ${type}`);
  }
}

function toSql(node: FilterNode, params: SQLInputValue[]): string {
  const bind = (v: SQLInputValue) => {
    if (v === null) return "NULL";
    params.push(v);
    return "?";
  };
  switch (node.type) {
    case "and":
    case "or":
      return `(${node.items.map((item) => toSql(item, params)).join(node.type === "and" ? " AND " : " OR ")})`;
    case "not":
      return `(NOT ${toSql(node.item, params)})`;
    case "isNull":
      return `(${sqlColumn(node.attr.name)} IS ${node.negated ? "NOT " : ""}NULL)`;
    case "compare": {
      const type = columns[node.attr.name as Attr].type;
      const col = sqlColumn(node.attr.name);
      const value = bind(sqlValue(node.value, type));
      // _uc upper-cases text; on other types it changes nothing
      return node.upper && type === "string"
        ? `(UPPER(${col}) ${node.op} UPPER(${value}))`
        : `(${col} ${node.op} ${value})`;
    }
    case "like": {
      const col = sqlColumn(node.attr.name);
      const value = bind(node.pattern.value);
      const not = node.negated ? "NOT " : "";
      return node.upper ? `(UPPER(${col}) ${not}LIKE UPPER(${value}))` : `(${col} ${not}LIKE ${value})`;
    }
    case "in": {
      const type = columns[node.attr.name as Attr].type;
      const list = node.values.map((v) => bind(sqlValue(v, type))).join(", ");
      return `(${sqlColumn(node.attr.name)} ${node.negated ? "NOT " : ""}IN (${list}))`;
    }
  }
}

// ---------------------------------------------------------------------------
// The two stores.

interface Doc {
  _id: number;
  [field: string]: unknown;
}

function toDoc(row: Row): Doc {
  const doc: Doc = { _id: row.id };
  for (const a of attrs) {
    const c = row[a];
    if (c.kind === "null") doc[columns[a].field] = null;
    else if (c.kind === "value") doc[columns[a].field] = c.value;
  }
  return doc;
}

function toSqlRow(row: Row): SQLInputValue[] {
  return [
    row.id,
    ...attrs.map((a): SQLInputValue => {
      const c = row[a];
      if (c.kind !== "value") return null;
      return typeof c.value === "boolean" ? (c.value ? 1 : 0) : c.value;
    }),
  ];
}

describe("query: differential test against SQLite (real MongoDB-wire store)", function () {
  this.timeout(120_000);
  let client: MongoClient;
  let dbName: string;
  let collection: Collection<Doc>;
  let sqlite: DatabaseSync;

  before(async () => {
    const { mongoUrl } = await testStores();
    client = new MongoClient(mongoUrl);
    await client.connect();
    dbName = `${isolationPrefix()}filters`;
    collection = client.db(dbName).collection<Doc>("rows");
    sqlite = new DatabaseSync(":memory:");
    sqlite.exec("PRAGMA case_sensitive_like = ON");
    sqlite.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, q INTEGER, p REAL, s TEXT, b INTEGER, note TEXT)");
  });

  after(async () => {
    await client?.db(dbName).dropDatabase();
    await client?.close();
    sqlite?.close();
  });

  async function load(rows: Row[]): Promise<void> {
    await collection.deleteMany({});
    await collection.insertMany(rows.map(toDoc));
    sqlite.exec("DELETE FROM t");
    const insert = sqlite.prepare("INSERT INTO t (id, q, p, s, b, note) VALUES (?, ?, ?, ?, ?, ?)");
    for (const row of rows) insert.run(...toSqlRow(row));
  }

  async function mongoIds(query: Record<string, unknown>, sort?: [string, 1 | -1][]): Promise<number[]> {
    const cursor = collection.find(query, { projection: { _id: 1 } });
    if (sort) cursor.sort(sort);
    return (await cursor.toArray()).map((d) => d._id);
  }

  function sqlIds(where: string, params: SQLInputValue[], orderBy = "id"): number[] {
    const rows = sqlite.prepare(`SELECT id FROM t WHERE ${where} ORDER BY ${orderBy}`).all(...params);
    return rows.map((r) => Number(r.id));
  }

  /** Runs one filter AST both ways and compares the id sets. */
  async function check(parsed: FilterNode, text: string): Promise<void> {
    const query = compileFilter(parsed, schema, globals);
    const params: SQLInputValue[] = [];
    const where = toSql(parsed, params);
    const got = (await mongoIds(query)).sort((a, b) => a - b);
    const want = sqlIds(where, params);
    const showQuery = JSON.stringify(query, (_k, v) => (v instanceof RegExp ? `/${v.source}/${v.flags}` : v));
    expect(
      got,
      `filter: ${text}\nmongo: ${showQuery}\nsql: ${where} ${JSON.stringify(params)}`,
    ).to.deep.equal(want);
  }

  it("filter text gives the same rows as SQL", async () => {
    let matched = 0;
    let total = 0;
    await fc.assert(
      fc.asyncProperty(
        rowsArb(FULL_ALPHABET),
        fc.array(filterArb(FULL_ALPHABET), { minLength: 3, maxLength: 3 }),
        async (rows, asts) => {
          await load(rows);
          for (const ast of asts) {
            const text = printFilter(ast);
            const parsed = parseFilter(text);
            await check(parsed, text);
            total++;
            if ((await mongoIds(compileFilter(parsed, schema, globals))).length > 0) matched++;
          }
        },
      ),
      { numRuns: 150 },
    );
    // the generators must produce filters that select something reasonably often
    expect(matched / total).to.be.greaterThan(0.2);
  });

  it("order gives the same sequence as SQL (nulls first ascending, ties by key)", async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb(FULL_ALPHABET),
        orderArb,
        filterArb(FULL_ALPHABET),
        async (rows, order, ast) => {
          await load(rows);
          const text = printOrder(order);
          const sort = [...compileOrder(parseOrder(text), schema), ["_id", 1] as [string, 1]];
          const filterText = printFilter(ast);
          const parsed = parseFilter(filterText);
          const params: SQLInputValue[] = [];
          const where = toSql(parsed, params);
          const orderBy = [
            ...order.map((o) => `${sqlColumn(o.attr.name)} ${o.direction.toUpperCase()}`),
            "id",
          ].join(", ");
          const got = await mongoIds(compileFilter(parsed, schema, globals), sort);
          expect(got, `order: ${text} filter: ${filterText}`).to.deep.equal(sqlIds(where, params, orderBy));
          // and without a filter
          expect(await mongoIds({}, sort), `order: ${text}`).to.deep.equal(sqlIds("1", [], orderBy));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("sysfilter text gives the same rows as SQL (with _uc on ASCII text)", async () => {
    const ops = [
      "equal",
      "notequal",
      "less",
      "lessequal",
      "greater",
      "greaterequal",
      "like",
      "notlike",
    ] as const;
    const jsQuote = (s: string, q: string) =>
      q + s.replace(/[\\'"\n]/g, (c) => (c === "\n" ? "\\n" : c === q || c === "\\" ? `\\${c}` : c)) + q;
    const printValue = (lit: Literal, q: string): string => {
      if (lit.kind === "string") return jsQuote(lit.value, q);
      if (lit.kind === "number") return lit.text;
      if (lit.kind === "boolean") return String(lit.value);
      return "null";
    };
    const call = fc
      .record({
        op: fc.constantFrom(...ops),
        uc: fc.boolean(),
        or: fc.boolean(),
        quote: fc.constantFrom("'", '"'),
      })
      .chain(({ op, uc, or, quote }) => {
        const isLike = op === "like" || op === "notlike";
        const ordering = !isLike && op !== "equal" && op !== "notequal";
        const usable = attrs.filter((a) =>
          isLike ? stringAttrs.includes(a) : !(uc && ordering && columns[a].type === "string"),
        );
        const pair = fc
          .constantFrom(...usable)
          .chain((a) =>
            fc.tuple(
              fc.constant(a),
              isLike
                ? textOf([...ASCII_ALPHABET, "%", "_"], 4).map(str)
                : literalFor(a, ASCII_ALPHABET).filter((l) => l.kind !== "global"),
            ),
          );
        return fc.array(pair, { minLength: 1, maxLength: 3 }).map((pairs) => {
          const name = (a: string) => (/^[A-Za-z_]\w*$/.test(a) ? a : jsQuote(a, quote));
          const body = pairs.map(([a, v]) => `${name(a)}: ${printValue(v, quote)}`).join(", ");
          return `${op}${uc ? "_uc" : ""}${or ? "_or" : ""}(${body})`;
        });
      });
    await fc.assert(
      fc.asyncProperty(
        rowsArb(ASCII_ALPHABET),
        fc.array(call, { minLength: 3, maxLength: 3 }),
        async (rows, texts) => {
          await load(rows);
          for (const text of texts) await check(parseSysfilter(text), text);
        },
      ),
      { numRuns: 80 },
    );
  });

  it("edge cases with known answers agree too", async () => {
    const rows: Row[] = [
      ["abc", 1],
      ["abc\n", 2],
      ["ABC", null],
      ["a.c", 3],
      ["a%c", 3],
      ["a_c", 0],
      ["", -1],
      [null, null],
      [undefined, undefined],
      ["$where", 5],
      ["x😀y", 6],
    ].map(([s, q], i) => ({
      id: i + 1,
      qty:
        q === undefined
          ? { kind: "missing" }
          : q === null
            ? { kind: "null" }
            : { kind: "value", value: q as number },
      price: { kind: "missing" },
      label:
        s === undefined
          ? { kind: "missing" }
          : s === null
            ? { kind: "null" }
            : { kind: "value", value: s as string },
      flag: { kind: "value", value: i % 2 === 0 },
      "Note Text": { kind: "null" },
    }));
    await load(rows);
    const texts = [
      "label like 'abc'",
      "label not like 'abc'",
      "label like 'a_c'",
      "label like '%.%'",
      "label like 'a%c'",
      "label not like '%'",
      "label like ''",
      "label like '$where'",
      "label like 'x_y'",
      "label = '' or label is null",
      "not (label = 'abc' or qty = 1)",
      "qty in (1, null)",
      "qty not in (1, null)",
      "not qty in (1, null)",
      "qty not in (1, 3)",
      "qty <> 3",
      "not qty = 3",
      "qty = null or not qty = null",
      "qty is null and label is not null",
      "flag = true and qty > 0 or label like 'a%'",
      "not not (qty >= 3 and not label like '%c')",
      '"Note Text" is null and not "Note Text" like \'%\'',
    ];
    for (const text of texts) await check(parseFilter(text), text);
  });
});
