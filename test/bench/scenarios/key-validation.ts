/**
 * Issue: key validation on the data path costs one Redis round trip and no
 * MongoDB round trip. Counted with the probe, then measured: the same
 * authenticated GET by key against the real data service and against the data
 * app built from the same deps with a fixed-record key validator.
 */
import { authHeaders } from "../lib/fixtures.ts";
import type { Trace } from "../lib/probe.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 20;

export function describeTrace(t: Trace): string {
  const list = (m: Record<string, number>) =>
    Object.entries(m)
      .map(([k, v]) => `${k}×${v}`)
      .join(", ") || "none";
  return `${t.redisPerCall} Redis, ${t.mongoPerCall} MongoDB per call over ${t.calls} calls (Redis: ${list(t.redis)}; MongoDB: ${list(t.mongo)})`;
}

export const keyValidation: Scenario = {
  id: "key-validation",
  title: "Key validation on the data path",
  describe:
    "GET by key through the data service with and without key validation (a data app built from the same " +
    "deps with a validator that returns a fixed record); the same pair on GET @tables, which reads no " +
    "MongoDB; floor: the bare find with and without the HGETALL.",
  async run(ctx) {
    const { stack, fixtures } = ctx;
    const probe = await ctx.probe();
    const v = probe.validation;
    ctx.check(
      "validation alone: exactly one Redis round trip (HGETALL), zero MongoDB",
      v.redisPerCall === 1 && (v.redis.HGETALL ?? 0) === v.calls && v.mongoPerCall === 0,
      describeTrace(v),
    );
    const k = probe.byKey;
    ctx.check(
      "whole GET by key: one Redis command and one MongoDB find per request",
      k.redisPerCall === 1 && k.mongoPerCall === 1 && (k.mongo.find ?? 0) === k.calls,
      describeTrace(k),
    );
    const floor = await ctx.floor();
    const variant = await ctx.once("data-without-validation", () =>
      stack.startServer(
        "data service without validation",
        "test/bench/servers/data-without-validation.ts",
        {
          ...stack.dataEnv,
          BENCH_KEY: fixtures.key,
          BENCH_ACCOUNT: fixtures.account,
          BENCH_PROJECT: fixtures.project,
        },
        ["--no-node-snapshot"],
      ),
    );
    const path = `${fixtures.root}/customer/${fixtures.customerName}`;
    const headers = authHeaders(fixtures);
    await ctx.measure([
      {
        name: "floor-find",
        what: "floor: the data service's find for GET by key, no Redis",
        target: { url: `${floor.url}/floor/find-nokey/key`, headers },
        connections: CONNECTIONS,
      },
      {
        name: "floor-hgetall-find",
        what: "floor: one HGETALL of the key record, then the same find",
        target: { url: `${floor.url}/floor/find/key`, headers },
        connections: CONNECTIONS,
        baseline: "floor-find",
      },
      {
        name: "data-no-validation",
        what: "data service, key validator returning a fixed record (no Redis)",
        target: { url: `${variant.url}${path}`, headers },
        connections: CONNECTIONS,
      },
      {
        name: "data",
        what: "data service as deployed: GET by key with key validation",
        target: { url: `${stack.dataUrl}${path}`, headers },
        connections: CONNECTIONS,
        baseline: "data-no-validation",
      },
      // The same pair on a keyed GET that reads no MongoDB (the project model is cached in memory):
      // the cost of validation where the store's find does not hide it.
      {
        name: "tables-no-validation",
        what: "data service, fixed-record validator: GET @tables (no store at all)",
        target: { url: `${variant.url}${fixtures.root}/@tables`, headers },
        connections: CONNECTIONS,
      },
      {
        name: "tables",
        what: "data service as deployed: GET @tables (one HGETALL)",
        target: { url: `${stack.dataUrl}${fixtures.root}/@tables`, headers },
        connections: CONNECTIONS,
        baseline: "tables-no-validation",
      },
    ]);
  },
};
