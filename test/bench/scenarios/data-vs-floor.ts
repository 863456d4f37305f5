/**
 * Issue: GET by key and GET list (pagesize 20, with a filter) through the data
 * service reach at least 0.8 of the requests/s of a floor server doing the
 * same store work (one Redis read of the key record, the same MongoDB find),
 * at 50 connections. Also: the same GET by key through the edge (the base URL).
 */
import { authHeaders } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 50;
const GOAL = { op: ">=", value: 0.8 } as const;

export const LIST_QUERY = `pagesize=20&filter=${encodeURIComponent("region = 'west'")}`;

export const dataVsFloor: Scenario = {
  id: "data-vs-floor",
  title: "Data service vs floor server (50 connections)",
  describe:
    "GET by key and GET list (pagesize 20, filter region = 'west') on the data service, each against the floor " +
    "server doing the same HGETALL and the same find (the find the data service sends, captured by the probe).",
  async run(ctx) {
    const { stack, fixtures } = ctx;
    const floor = await ctx.floor();
    const headers = authHeaders(fixtures);
    const keyPath = `${fixtures.root}/customer/${fixtures.customerName}`;
    const listPath = `${fixtures.root}/customer?${LIST_QUERY}`;
    await ctx.measure([
      {
        name: "floor-key",
        what: "floor: HGETALL + the find of GET by key",
        target: { url: `${floor.url}/floor/find/key`, headers },
        connections: CONNECTIONS,
      },
      {
        name: "data-key",
        what: "data service: GET customer/<name>",
        target: { url: `${stack.dataUrl}${keyPath}`, headers },
        connections: CONNECTIONS,
        baseline: "floor-key",
        goal: GOAL,
      },
      {
        name: "floor-list",
        what: "floor: HGETALL + the find of the filtered list",
        target: { url: `${floor.url}/floor/find/list`, headers },
        connections: CONNECTIONS,
      },
      {
        name: "data-list",
        what: "data service: GET customer?pagesize=20&filter=region = 'west'",
        target: { url: `${stack.dataUrl}${listPath}`, headers },
        connections: CONNECTIONS,
        baseline: "floor-list",
        goal: GOAL,
      },
      {
        name: "edge-key",
        what: "GET by key through the edge, nginx (one more HTTP hop)",
        target: { url: `${stack.baseUrl}${keyPath}`, headers },
        connections: CONNECTIONS,
        baseline: "data-key",
      },
    ]);
  },
};
