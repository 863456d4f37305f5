/**
 * What metering and quota enforcement cost (docs/operations.md#plans-and-quotas):
 * a plain insert and a GET by key through a data service with metering on, to
 * an account on a plan with every write limit set (the row count checked in the
 * write-lock script, the stored bytes from the cached measurement), against the
 * same through a second data service of the same deployment with
 * USAGE_METERING=false, to an account on the built-in unlimited plan. Then the
 * usage answer over 30 days of hourly data (seeded into the series as the
 * flushes would have written it), by day and by hour.
 */

import { UsageSeries } from "../../../services/data/src/usage/usage-series.ts";
import { createRedisClient } from "../../../shared/redis/clients.ts";
import { adminClient, keyHeader, projectClient } from "../../support/http.ts";
import { expectStatus, oneTableProject } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;
const PROJECT = "metered";
const ON = "quota-on";
const OFF = "quota-off";
const DAYS = 30;
const PLAN = {
  storedBytes: 1e13,
  rowsPerTable: 1e9,
  projects: 100,
  tablesPerProject: 100,
  usersPerProject: 10_000,
};

/** Counters of one busy hour (the metrics the meter writes). */
function hourOf(n: number): Map<string, number> {
  return new Map([
    ["req.read.2xx", 3600 + (n % 97)],
    ["req.read.4xx", n % 13],
    ["req.write.2xx", 1200 + (n % 31)],
    ["req.write.4xx", n % 7],
    ["req.admin.2xx", 12],
    [`p:${PROJECT}:req.read`, 3600],
    [`p:${PROJECT}:req.write`, 1200],
    ["cpu.ms", 5000 + n],
    ["hook.delivered", 300],
    ["live.ms", 3_600_000],
  ]);
}

export const quotas: Scenario = {
  id: "quotas",
  title: "The cost of metering and quota enforcement; the usage answer over 30 days",
  describe:
    "POST one row and GET one row by key with metering on and the account on a plan with limits vs the same " +
    "through a data service with USAGE_METERING=false and the account on the unlimited plan (goal: req/s ratio " +
    `>= 0.95 each); GET …/usage over ${DAYS} days of hourly data by day and by hour (p50 reported; baseline: GET …/plan).`,
  async run(ctx) {
    const { stack } = ctx;
    const admin = adminClient(stack.baseUrl, stack.adminToken);
    expectStatus(await admin.send("PUT", "/plans/bench", PLAN), 201, "PUT plan");
    const keys: Record<string, string> = {};
    for (const account of [ON, OFF]) {
      expectStatus(await admin.putAccount(account), 201, `PUT account ${account}`);
      expectStatus(await admin.putProject(account, PROJECT, oneTableProject("entry")), 201, "PUT project");
      const created = await admin.createKey(account, PROJECT, { name: "bench", roles: ["Full access"] });
      expectStatus(created, 201, "POST apikeys");
      keys[account] = created.body.apikey as string;
      const seeded = await projectClient(stack.baseUrl, account, PROJECT).post(keys[account], "entry", {
        id: "seed",
        name: "seed",
        qty: 1,
      });
      expectStatus(seeded, 201, "POST seed row");
    }
    expectStatus(
      await admin.send("PUT", `/accounts/${ON}/plan`, { plan: "bench" }),
      200,
      "PUT plan of account",
    );
    expectStatus(await admin.send("POST", `/accounts/${ON}/usage/measure`), 200, "POST usage/measure");
    const server = (name: string, metering: boolean) =>
      stack.startServer(
        name,
        "services/data/src/main.ts",
        { ...stack.dataEnv, USAGE_METERING: String(metering) },
        ["--no-node-snapshot"],
      );
    const [off, on] = [
      await server("data service, metering off", false),
      await server("data service, metering on", true),
    ];
    let written = 0;
    const post = (url: string, account: string) => {
      const root = projectClient(url, account, PROJECT).root;
      return {
        url: `${url}${root}/entry`,
        method: "POST" as const,
        headers: keyHeader(keys[account]!),
        next: () => {
          const n = ++written;
          return {
            path: `${root}/entry?txsummary=false`,
            body: JSON.stringify({ id: `e${n}`, name: `entry ${n}`, qty: n % 7 }),
          };
        },
      };
    };
    const get = (url: string, account: string) => ({
      url: `${url}${projectClient(url, account, PROJECT).root}/entry/seed`,
      headers: keyHeader(keys[account]!),
    });

    // 30 days of hours (and the last two days of minutes) in the series, as the flushes write them.
    const redis = createRedisClient({
      REDIS_MODE: "single",
      REDIS_URL: stack.dataEnv.REDIS_URL!,
      REDIS_TLS: false,
    });
    try {
      const series = new UsageSeries(redis, stack.dataEnv.REDIS_PREFIX!, {
        minuteMs: 48 * 3_600_000,
        hourMs: 400 * 86_400_000,
      });
      const now = Date.now();
      for (let h = 0; h < DAYS * 24; h++) {
        const at = now - (DAYS * 24 - h) * 3_600_000;
        await series.add(
          ON,
          at,
          hourOf(h),
          new Map([
            ["g.bytes", 1e6 + h * 1000],
            ["g.rows", 5000 + h],
          ]),
        );
      }
    } finally {
      redis.disconnect();
    }
    const operator = { authorization: `Bearer ${stack.adminToken}` };
    const from = new Date(Date.now() - DAYS * 86_400_000).toISOString();
    const usage = (step: string) => ({
      url: `${on.url}/admin/v1/accounts/${ON}/usage?from=${encodeURIComponent(from)}&step=${step}`,
      headers: operator,
    });

    await ctx.measure([
      {
        name: "insert-off",
        what: "POST one row, metering off, unlimited plan",
        target: post(off.url, OFF),
        connections: CONNECTIONS,
      },
      {
        name: "insert-on",
        what: "POST one row, metering on, plan with row and byte limits",
        target: post(on.url, ON),
        connections: CONNECTIONS,
        baseline: "insert-off",
        goal: { op: ">=", value: 0.95 },
      },
      {
        name: "get-off",
        what: "GET one row by key, metering off",
        target: get(off.url, OFF),
        connections: CONNECTIONS,
      },
      {
        name: "get-on",
        what: "GET one row by key, metering on, plan with limits",
        target: get(on.url, ON),
        connections: CONNECTIONS,
        baseline: "get-off",
        goal: { op: ">=", value: 0.95 },
      },
      {
        name: "plan",
        what: "GET …/accounts/{a}/plan (reference: one admin GET)",
        target: { url: `${on.url}/admin/v1/accounts/${ON}/plan`, headers: operator },
        connections: 4,
      },
      {
        name: "usage-30d-by-day",
        what: `GET …/usage over ${DAYS} days, step 1d (30 hour hashes read in one pipeline)`,
        target: usage("1d"),
        connections: 4,
        baseline: "plan",
        compare: "p50",
      },
      {
        name: "usage-30d-by-hour",
        what: `GET …/usage over ${DAYS} days, step 1h (720 points)`,
        target: usage("1h"),
        connections: 4,
        baseline: "plan",
        compare: "p50",
      },
    ]);
  },
};
