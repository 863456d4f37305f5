/**
 * Per-tenant cost that does not grow with the number of tenants. Creates
 * tenants (an account, one project of two tables with a string key, five rows
 * in each, one API key) up to the largest of BENCH_TENANTS (default
 * "1000,5000,10000"; the creation time of the last 50 ÷ the first 50 is
 * checked), then measures GET by key spread uniformly over the first N tenants
 * ÷ the same GET on one tenant, for each N, rows alternating. It talks only to
 * the API, so it runs unchanged against any MONGO_URL. After the rows it
 * reports each process's resident memory.
 */
import { readdirSync, readFileSync } from "node:fs";
import { adminClient, keyHeader, projectClient } from "../../support/http.ts";
import { expectStatus } from "../lib/fixtures.ts";
import type { BenchContext, RowSpec, Scenario } from "../lib/types.ts";

const CONNECTIONS = 8;
/** Tenants created at once. */
const CREATORS = 8;
const ROWS_PER_TABLE = 5;
const EDGE_SAMPLE = 50;
const GOAL = { op: ">=", value: 0.8 } as const;

function sizes(): number[] {
  const raw = process.env.BENCH_TENANTS ?? "1000,5000,10000";
  const values = raw.split(",").map((s) => Number(s.trim()));
  if (values.some((n) => !Number.isInteger(n) || n < EDGE_SAMPLE * 2))
    throw new Error(`BENCH_TENANTS must list whole numbers of at least ${EDGE_SAMPLE * 2}, not '${raw}'`);
  return [...new Set(values)].sort((a, b) => a - b);
}

const SIZES = sizes();
const MOST = SIZES[SIZES.length - 1]!;

const account = (i: number) => `t${String(i).padStart(6, "0")}`;
const PROJECT = "app";
const rowKey = (j: number) => `r${j}`;

function tenantProject() {
  const table = {
    key: ["id"],
    columns: { id: { type: "string", required: true }, note: { type: "string" } },
  };
  return {
    authentication: { provider: "builtin" },
    tables: { first: table, second: table },
    apiVersions: { v1: { resources: {} } },
    roles: { "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
  };
}

/** Creates tenant `i`; its key. */
async function createTenant(ctx: BenchContext, i: number): Promise<string> {
  const admin = adminClient(ctx.stack.baseUrl, ctx.stack.adminToken);
  const name = account(i);
  expectStatus(await admin.putAccount(name), 201, `PUT account ${name}`);
  expectStatus(await admin.putProject(name, PROJECT, tenantProject()), 201, `PUT project ${name}`);
  const created = await admin.createKey(name, PROJECT, { name: "bench", roles: ["Full access"] });
  expectStatus(created, 201, `POST apikeys ${name}`);
  const key = created.body.apikey as string;
  const client = projectClient(ctx.stack.baseUrl, name, PROJECT);
  const rows = Array.from({ length: ROWS_PER_TABLE }, (_, j) => ({ id: rowKey(j), note: `${name} ${j}` }));
  for (const table of ["first", "second"])
    expectStatus(await client.post(key, `${table}?txsummary=false`, rows), 201, `POST ${name}/${table}`);
  return key;
}

/** Creates tenants 0 … count-1, CREATORS at a time; their keys and each one's creation time (ms). */
async function createTenants(ctx: BenchContext, count: number) {
  const keys: string[] = new Array(count);
  const ms: number[] = new Array(count);
  let next = 0;
  const started = Date.now();
  const creator = async () => {
    for (let i = next++; i < count; i = next++) {
      const t = performance.now();
      keys[i] = await createTenant(ctx, i);
      ms[i] = performance.now() - t;
      if ((i + 1) % 1000 === 0)
        ctx.log(`tenants: ${i + 1} of ${count} after ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  };
  await Promise.all(Array.from({ length: CREATORS }, creator));
  ctx.log(`tenants: ${count} created in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { keys, ms };
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** Resident memory of a process, MiB (null when it cannot be read). */
function rssMiB(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return Number.isFinite(kib) ? kib / 1024 : null;
  } catch {
    return null;
  }
}

/** Open files of a process (null when they cannot be read). */
function openFiles(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

/** A GET by key that visits tenants 0 … n-1 in turn (a different row each round). */
function spread(ctx: BenchContext, keys: string[], n: number) {
  let i = 0;
  const url = `${ctx.stack.baseUrl}/`;
  return {
    url,
    // The key changes with every request: `next` cannot set headers, so the key goes in the query.
    next: () => {
      const t = i++ % n;
      const row = Math.floor(i / n) % ROWS_PER_TABLE;
      const table = (i & 1) === 0 ? "first" : "second";
      return {
        path: `/rest/${account(t)}/${PROJECT}/v1/${table}/${rowKey(row)}?auth=${encodeURIComponent(`${keys[t]}:1`)}`,
      };
    },
  };
}

export const tenants: Scenario = {
  id: "tenants",
  title: `GET by key spread over ${SIZES.map((n) => n.toLocaleString("en")).join(" / ")} tenants ÷ on one tenant`,
  describe:
    `Tenants (an account with one project of 2 tables, 5 rows each, and a key) created ${CREATORS} at a time up to ` +
    `${MOST.toLocaleString("en")}; GET by key (${CONNECTIONS} connections) spread uniformly over the first N tenants ` +
    `÷ the same GET always on one tenant, for N in ${SIZES.join(", ")} (BENCH_TENANTS). Goals: ≥ ${GOAL.value} at every N; ` +
    `creation time of the last ${EDGE_SAMPLE} tenants ÷ the first ${EDGE_SAMPLE} ≥ ${GOAL.value} (a rate ratio).`,
  async run(ctx) {
    const { keys, ms } = await createTenants(ctx, MOST);
    const first = mean(ms.slice(0, EDGE_SAMPLE));
    const last = mean(ms.slice(-EDGE_SAMPLE));
    ctx.check(
      `creation of the last ${EDGE_SAMPLE} tenants at ≥ ${GOAL.value}× the rate of the first ${EDGE_SAMPLE}`,
      first / last >= GOAL.value,
      `first ${first.toFixed(1)} ms, last ${last.toFixed(1)} ms per tenant (rate ratio ${(first / last).toFixed(2)})`,
    );
    const one = {
      url: `${ctx.stack.baseUrl}/rest/${account(0)}/${PROJECT}/v1/first/${rowKey(0)}`,
      headers: keyHeader(keys[0]!),
    };
    const rows: RowSpec[] = [
      { name: "one", what: "GET by key, always tenant 0", target: one, connections: CONNECTIONS },
      ...SIZES.map(
        (n): RowSpec => ({
          name: `spread-${n}`,
          what: `GET by key, tenants 0…${n - 1} in turn`,
          target: spread(ctx, keys, n),
          connections: CONNECTIONS,
          baseline: "one",
          compare: "rps",
          goal: GOAL,
        }),
      ),
    ];
    await ctx.measure(rows);
    const pids = { ...ctx.stack.cpuGroups };
    const memory = Object.entries(pids)
      .map(([name, pid]) => `${name} ${rssMiB(pid)?.toFixed(0) ?? "?"} MiB`)
      .join(", ");
    ctx.log(
      `tenants: resident memory after the rows: ${memory}; store open files ${openFiles(pids.store) ?? "?"}`,
    );
  },
};
