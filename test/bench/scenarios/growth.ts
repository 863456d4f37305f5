/**
 * Cost that does not grow with the data: each operation's rate on a table of
 * BENCH_GROWTH_ROWS orders (default 100,000) ÷ its rate on a table of
 * BENCH_GROWTH_SMALL orders (default 1,000), measured in one run, rows
 * alternating. Two copies of one schema (customer → order → item, with sum rules
 * and an index on `placed`), loaded through the API (the load time is reported):
 * GET by key, PUT, DELETE, an order POST, a line item POST whose rules cascade
 * over three levels, the first page, the next page by its link, the orders of one
 * customer (children by foreign key: 100 of them, and a page of the 1,000 of one
 * big customer, nested and by a filter on the foreign key), a filter on the
 * indexed `region` (¼ of the rows match), an order on the indexed `placed` and
 * its page 30, a range and a filter with order on `placed`, and a filter on the
 * non-indexed `note` (a scan, reported, no goal). It talks only to the API, so it
 * runs unchanged against any MONGO_URL.
 */
import { adminClient, keyHeader } from "../../support/http.ts";
import { ACCOUNT, BATCH, benchProject, expectStatus } from "../lib/fixtures.ts";
import type { BenchContext, RowSpec, Scenario } from "../lib/types.ts";

const CONNECTIONS = 4;
const PROJECT = "scale";
/** Orders per customer: the same in both sizes, so that one customer's orders are the same work. */
const ORDERS_PER_CUSTOMER = 100;
const PAGESIZE = 20;
const GOAL = { op: ">=", value: 0.8 } as const;

function count(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < ORDERS_PER_CUSTOMER)
    throw new Error(
      `${name} must be a whole number of rows of at least ${ORDERS_PER_CUSTOMER}, not '${raw}'`,
    );
  return value;
}

const LARGE = count("BENCH_GROWTH_ROWS", 100_000);
const SMALL = count("BENCH_GROWTH_SMALL", 1_000);
/**
 * Orders that DELETE removes, on top of each size's orders (each is deleted once; more requests
 * than this answer 404, reported as failures): enough for the default duration and rounds.
 */
const DELETABLE = count("BENCH_GROWTH_DELETABLE", 5_000);

const SIZES = { small: SMALL, large: LARGE } as const;
/** The orders of the one big customer, on top of each size's orders. */
const BIG_CUSTOMER_ORDERS = 1_000;
const REGIONS = ["EU", "US", "AS", "AF"];
type Size = keyof typeof SIZES;

function sizeTables(size: Size) {
  return {
    [`customer_${size}`]: {
      key: ["name"],
      columns: { name: { type: "string", required: true }, balance: { type: "number", default: 0 } },
    },
    [`order_${size}`]: {
      key: ["id"],
      columns: {
        id: { type: "string", required: true },
        customer_name: { type: "string", required: true },
        placed: { type: "integer", required: true },
        note: { type: "string" },
        region: { type: "string" },
        amount_total: { type: "number", default: 0 },
      },
      parents: {
        customer: { table: `customer_${size}`, columns: { customer_name: "name" }, children: "orders" },
      },
      indexes: [{ columns: ["placed"] }, { columns: ["region"] }],
    },
    [`item_${size}`]: {
      key: ["id"],
      columns: {
        id: { type: "string", required: true },
        order_id: { type: "string", required: true },
        amount: { type: "number", default: 0 },
      },
      parents: { order: { table: `order_${size}`, columns: { order_id: "id" }, children: "items" } },
    },
  };
}

function sizeRules(size: Size) {
  return [
    { table: `order_${size}`, type: "sum", column: "amount_total", children: "items", of: "amount" },
    { table: `customer_${size}`, type: "sum", column: "balance", children: "orders", of: "amount_total" },
  ];
}

function sizeResources(size: Size) {
  return {
    [`Customers_${size}`]: {
      table: `customer_${size}`,
      subresources: { Orders: { table: `order_${size}`, via: "customer" } },
    },
  };
}

function growthProject() {
  return {
    authentication: { provider: "builtin" },
    tables: { ...sizeTables("small"), ...sizeTables("large") },
    rules: [...sizeRules("small"), ...sizeRules("large")],
    apiVersions: { v1: { resources: { ...sizeResources("small"), ...sizeResources("large") } } },
    roles: { "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
  };
}

const pad = (n: number) => String(n).padStart(7, "0");
const customersOf = (size: Size) => Math.ceil(SIZES[size] / ORDERS_PER_CUSTOMER);

/** Loads one size's customers and orders (and the orders DELETE removes) through the API. */
async function load(ctx: BenchContext, post: (path: string, rows: object[]) => Promise<void>, size: Size) {
  const orders = SIZES[size];
  const customers = customersOf(size);
  const started = Date.now();
  for (let i = 0; i < customers; i += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, customers - i) }, (_, j) => ({
      name: `c${pad(i + j)}`,
    }));
    await post(`customer_${size}`, rows);
  }
  await post(`customer_${size}`, [{ name: "cbig" }]);
  for (let i = 0; i < BIG_CUSTOMER_ORDERS; i += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, BIG_CUSTOMER_ORDERS - i) }, (_, j) => ({
      id: `b${pad(i + j)}`,
      customer_name: "cbig",
      placed: -2,
      note: "big customer",
    }));
    await post(`order_${size}`, rows);
  }
  for (let i = 0; i < orders + DELETABLE; i += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, orders + DELETABLE - i) }, (_, j) => {
      const n = i + j;
      return n < orders
        ? {
            id: `o${pad(n)}`,
            customer_name: `c${pad(n % customers)}`,
            placed: n,
            note: `note ${n % 97}`,
            region: REGIONS[n % REGIONS.length],
          }
        : { id: `d${pad(n - orders)}`, customer_name: `c${pad(0)}`, placed: -1, note: "deletable" };
    });
    await post(`order_${size}`, rows);
  }
  const seconds = (Date.now() - started) / 1000;
  ctx.log(
    `${size}: ${orders.toLocaleString("en")} orders (+${DELETABLE} to delete) loaded in ${seconds.toFixed(1)} s`,
  );
}

/** Follows next_batch links from the first page to the link of page `page`. */
async function deepLink(url: string, key: string, page: number): Promise<string> {
  let next = url;
  for (let i = 1; i < page; i++) {
    const reply = await fetch(next, { headers: keyHeader(key) });
    const rows = (await reply.json()) as { "@metadata"?: { next_batch?: string } }[];
    const link = rows[rows.length - 1]?.["@metadata"]?.next_batch;
    if (!link) throw new Error(`page ${i} of ${url} has no next_batch link`);
    next = link;
  }
  return next;
}

export const growth: Scenario = {
  id: "growth",
  title: `Rates at ${LARGE.toLocaleString("en")} rows ÷ at ${SMALL.toLocaleString("en")} rows`,
  describe:
    `Each operation on a table of ${LARGE.toLocaleString("en")} orders against the same on a table of ` +
    `${SMALL.toLocaleString("en")} (BENCH_GROWTH_ROWS, BENCH_GROWTH_SMALL), loaded through the API; ` +
    "goal ≥ 0.8 for every operation that an index serves.",
  async run(ctx) {
    const { stack } = ctx;
    const admin = adminClient(stack.baseUrl, stack.adminToken);
    const { key, client } = await benchProject(stack, PROJECT, growthProject());
    const post = async (path: string, rows: object[]) =>
      expectStatus(await client.post(key, `${path}?txsummary=false`, rows), 201, `POST ${path}`);
    for (const size of ["small", "large"] as const) await load(ctx, post, size);
    await waitForIndexes(ctx, admin);

    const root = `${stack.dataUrl}${client.root}`;
    const headers = keyHeader(key);
    const cycle = (size: Size, make: (n: number) => { path?: string; body?: string }) => {
      let n = 0;
      return () => make(n++ % SIZES[size]);
    };
    const rows: RowSpec[] = [];
    const add = (name: string, what: (size: Size) => string, target: (size: Size) => RowSpec["target"]) => {
      for (const size of ["small", "large"] as const) {
        rows.push({
          name: `${name}-${size}`,
          what: `${what(size)} (${SIZES[size].toLocaleString("en")} orders)`,
          target: target(size),
          connections: CONNECTIONS,
          ...(size === "large"
            ? { baseline: `${name}-small`, ...(name === "scan" ? {} : { goal: GOAL }) }
            : {}),
        });
      }
    };
    add(
      "get-by-key",
      () => "GET one order by key",
      (size) => ({
        url: `${root}/order_${size}`,
        headers,
        next: cycle(size, (n) => ({
          path: `${client.root}/order_${size}/o${pad((n * 7919) % SIZES[size])}`,
        })),
      }),
    );
    add(
      "put",
      () => "PUT one order (checksum override: the row is read and checked as with a checksum)",
      (size) => ({
        url: `${root}/order_${size}`,
        method: "PUT",
        headers: { ...headers, "content-type": "application/json" },
        next: cycle(size, (n) => ({
          path: `${client.root}/order_${size}/o${pad((n * 7919) % SIZES[size])}?txsummary=false`,
          body: JSON.stringify({ note: `changed ${n}`, "@metadata": { checksum: "override" } }),
        })),
      }),
    );
    for (const size of ["small", "large"] as const) {
      // Each deletable order once; beyond DELETABLE requests the answers are 404s (reported).
      let deleted = 0;
      rows.push({
        name: `delete-${size}`,
        what: `DELETE one order (${SIZES[size].toLocaleString("en")} orders)`,
        target: {
          url: `${root}/order_${size}`,
          method: "DELETE",
          headers,
          next: () => ({ path: `${client.root}/order_${size}/d${pad(deleted++)}?checksum=override` }),
        },
        connections: CONNECTIONS,
        ...(size === "large" ? { baseline: "delete-small", goal: GOAL } : {}),
      });
    }
    let inserted = 0;
    add(
      "insert",
      () => "POST one order",
      (size) => ({
        url: `${root}/order_${size}`,
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        next: () => {
          const n = inserted++;
          return {
            path: `${client.root}/order_${size}?txsummary=false`,
            body: JSON.stringify({ id: `n${pad(n)}`, customer_name: `c${pad(0)}`, placed: -3 }),
          };
        },
      }),
    );
    let items = 0;
    add(
      "cascade-insert",
      () => "POST one item (rules: order sum, customer sum)",
      (size) => ({
        url: `${root}/item_${size}`,
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        next: () => {
          const n = items++;
          const order = `o${pad((n * 7919) % SIZES[size])}`;
          return {
            path: `${client.root}/item_${size}?txsummary=false`,
            body: JSON.stringify({ id: `i${n}`, order_id: order, amount: 1 }),
          };
        },
      }),
    );
    add(
      "first-page",
      () => `GET the first page of orders (pagesize ${PAGESIZE}, default order)`,
      (size) => ({ url: `${root}/order_${size}?pagesize=${PAGESIZE}`, headers }),
    );
    const links = {
      small: await deepLink(`${root}/order_small?pagesize=${PAGESIZE}`, key, 30),
      large: await deepLink(`${root}/order_large?pagesize=${PAGESIZE}`, key, 30),
    };
    const ordered = (size: Size) => `${root}/order_${size}?order=placed&pagesize=${PAGESIZE}`;
    const orderedLinks = {
      small: await deepLink(ordered("small"), key, 30),
      large: await deepLink(ordered("large"), key, 30),
    };
    add(
      "next-page",
      () => "GET page 30 of orders by its next_batch link",
      (size) => ({ url: links[size], headers }),
    );
    add(
      "children",
      () => `GET one customer with its ${ORDERS_PER_CUSTOMER} orders (a page of them, by foreign key)`,
      (size) => ({
        url: `${root}/Customers_${size}`,
        headers,
        next: cycle(size, (n) => ({
          path: `${client.root}/Customers_${size}/c${pad(n % customersOf(size))}?pagesize=${PAGESIZE}`,
        })),
      }),
    );
    add(
      "big-children",
      () => `GET the customer with ${BIG_CUSTOMER_ORDERS} orders, a page of them (by foreign key)`,
      (size) => ({ url: `${root}/Customers_${size}/cbig?pagesize=${PAGESIZE}`, headers }),
    );
    add(
      "fk-filter",
      () => `GET a page of the ${BIG_CUSTOMER_ORDERS} orders of one customer, filtered on the foreign key`,
      (size) => ({
        url: `${root}/order_${size}?${new URLSearchParams({ filter: "customer_name = 'cbig'", pagesize: String(PAGESIZE) })}`,
        headers,
      }),
    );
    add(
      "indexed-filter",
      () => "GET a page of orders filtered on the indexed `region` (¼ of the rows match)",
      (size) => ({
        url: `${root}/order_${size}?${new URLSearchParams({ filter: "region = 'EU'", pagesize: String(PAGESIZE) })}`,
        headers,
      }),
    );
    add(
      "ordered-page",
      () => "GET the first page of orders in the order of the indexed `placed`",
      (size) => ({ url: ordered(size), headers }),
    );
    add(
      "ordered-next-page",
      () => "GET page 30 of orders in the order of the indexed `placed`, by its next_batch link",
      (size) => ({ url: orderedLinks[size], headers }),
    );
    add(
      "indexed-range",
      () => "GET a page of orders in a range of the indexed `placed` (100 values)",
      (size) => ({
        url: `${root}/order_${size}?${new URLSearchParams({
          filter: `placed >= ${Math.floor(SIZES[size] / 2)} and placed < ${Math.floor(SIZES[size] / 2) + 100}`,
          pagesize: String(PAGESIZE),
        })}`,
        headers,
      }),
    );
    add(
      "indexed-filter-order",
      () => "GET orders filtered and ordered on the indexed `placed` (the latest 100, a page)",
      (size) => ({
        url: `${root}/order_${size}?${new URLSearchParams({
          filter: `placed >= ${SIZES[size] - 100}`,
          order: "placed desc",
          pagesize: String(PAGESIZE),
        })}`,
        headers,
      }),
    );
    add(
      "scan",
      () => "GET orders filtered on the non-indexed `note` (a table scan; no goal)",
      (size) => ({
        url: `${root}/order_${size}?${new URLSearchParams({ filter: "note = 'note 5'", pagesize: String(PAGESIZE) })}`,
        headers,
      }),
    );
    await ctx.measure(rows);
  },
};

/** The indexes are made in the background: measure once they are all there. */
async function waitForIndexes(ctx: BenchContext, admin: ReturnType<typeof adminClient>): Promise<void> {
  const started = Date.now();
  for (;;) {
    const reply = await admin.send("GET", `/accounts/${ACCOUNT}/projects/${PROJECT}/indexes`);
    const states = (reply.body.indexes as { state: string; name: string; error?: string }[]) ?? [];
    const failed = states.find((s) => s.state === "failed");
    if (failed) throw new Error(`index ${failed.name} failed: ${failed.error}`);
    if (states.length > 0 && states.every((s) => s.state === "ready")) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  ctx.log(`indexes ready ${((Date.now() - started) / 1000).toFixed(1)} s after loading`);
}
