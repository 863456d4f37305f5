/**
 * Insert rate on a growing table: POST one row into a table that already holds
 * 10,000 rows against POST one row into (nearly) empty tables. On FerretDB every
 * find scans its table, so a write path that reads before it inserts gets
 * slower as the table grows; one that relies on the unique key does not.
 * The baseline spreads its rows over EMPTY_TABLES tables so that each stays
 * small while it is measured. The same pair on the floor server (one insertOne,
 * nothing else) tells what the store itself does as a collection grows.
 */
import { keyHeader } from "../../support/http.ts";
import { BATCH, benchProject, expectStatus } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;
const PROJECT = "growth";
const PRESENT = 10_000;
const EMPTY_TABLES = 20;

const columns = {
  id: { type: "string", required: true },
  name: { type: "string" },
  qty: { type: "integer", default: 1 },
};

function growthProject() {
  const tables: Record<string, unknown> = { grown: { key: ["id"], columns } };
  for (let i = 0; i < EMPTY_TABLES; i++) tables[`fresh${i}`] = { key: ["id"], columns };
  return {
    authentication: { provider: "builtin" },
    tables,
    apiVersions: { v1: { resources: {} } },
    roles: { "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
  };
}

export const insertGrowth: Scenario = {
  id: "insert-growth",
  title: `Insert rate with ${PRESENT.toLocaleString("en")} rows present vs none`,
  describe:
    `POST one row into a table holding ${PRESENT.toLocaleString("en")} rows against POST one row into empty ` +
    `tables (the baseline spreads its rows over ${EMPTY_TABLES} tables so each stays small); the same pair ` +
    "as bare insertOne commands on the floor server.",
  async run(ctx) {
    const { stack } = ctx;
    const { key, client } = await benchProject(stack, PROJECT, growthProject());
    const started = Date.now();
    for (let i = 0; i < PRESENT; i += BATCH) {
      const rows = Array.from({ length: BATCH }, (_, j) => ({ id: `pre${i + j}`, name: `row ${i + j}` }));
      expectStatus(await client.post(key, "grown?txsummary=false", rows), 201, `POST grown rows ${i}..`);
    }
    ctx.log(`${PRESENT} rows in 'grown' after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const root = `${stack.dataUrl}${client.root}`;
    let written = 0;
    const post = (table: (n: number) => string) => ({
      url: `${root}/grown`,
      method: "POST" as const,
      headers: keyHeader(key),
      next: () => {
        const n = ++written;
        return {
          path: `${client.root}/${table(n)}?txsummary=false`,
          body: JSON.stringify({ id: `r${n}`, name: `row ${n}`, qty: n % 7 }),
        };
      },
    });
    const floor = await ctx.floor();
    let floorWritten = 0;
    const floorInsert = (table: (n: number) => string) => ({
      url: `${floor.url}/floor/insert`,
      method: "POST" as const,
      next: () => {
        const n = ++floorWritten;
        return { path: `/floor/insert/${table(n)}`, body: JSON.stringify({ id: `f${n}`, order_number: n }) };
      },
    });
    await ctx.measure([
      {
        name: "floor-empty",
        what: `store floor: one insertOne, ${EMPTY_TABLES} collections that start empty (round-robin)`,
        target: floorInsert((n) => `fresh${n % EMPTY_TABLES}`),
        connections: CONNECTIONS,
      },
      {
        name: "floor-grown",
        what: `store floor: one insertOne into a collection with ${PRESENT.toLocaleString("en")} rows`,
        target: floorInsert(() => "grown"),
        connections: CONNECTIONS,
        baseline: "floor-empty",
      },
      {
        name: "empty",
        what: `POST one row, ${EMPTY_TABLES} tables that start empty (round-robin)`,
        target: post((n) => `fresh${n % EMPTY_TABLES}`),
        connections: CONNECTIONS,
      },
      {
        name: "grown",
        what: `POST one row into a table with ${PRESENT.toLocaleString("en")} rows`,
        target: post(() => "grown"),
        connections: CONNECTIONS,
        baseline: "empty",
        goal: { op: ">=", value: 0.9 },
      },
    ]);
    ctx.log(`${written} rows posted while measuring`);
  },
};
