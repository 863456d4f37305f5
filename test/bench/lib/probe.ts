/**
 * Counts the store round trips of the data path, in the bench process: a data
 * service built with createDataService (the production composition root) on
 * the same stores, with the MongoDB driver's command monitoring switched on
 * (`monitorCommands=true` in the URL: every command emits `commandStarted`)
 * and every ioredis command counted (Redis.prototype.sendCommand wrapped while
 * tracing; the probe process runs no other Redis client). It answers:
 *  - key validation alone (deps.keys.validate): Redis and MongoDB commands per call;
 *  - a whole GET by key / GET list through the app: the same, per request;
 *  - the exact `find` each GET sends, which the floor server then replays.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import mongoose from "mongoose";
import { createDataService, type DataService } from "../../../services/data/src/service.ts";
import { dataConfigSchema, parseConfig } from "../../../shared/config/config.ts";
import { createLogger } from "../../../shared/logger.ts";
import type { Stack } from "./stack.ts";

export interface CapturedFind {
  db: string;
  collection: string;
  filter: unknown;
  options: { sort?: unknown; skip?: number; limit?: number; projection?: unknown; maxTimeMS?: number };
}

export interface Trace {
  calls: number;
  /** Commands by name, summed over all calls. */
  redis: Record<string, number>;
  mongo: Record<string, number>;
  redisPerCall: number;
  mongoPerCall: number;
}

export interface ProbeResult {
  validation: Trace;
  byKey: Trace;
  list: Trace;
  /** EJSON (canonical) of the captured finds, for the floor server. */
  queries: { key: string; list: string };
}

export interface ProbeRequests {
  scope: { account: string; project: string };
  authorization: string;
  /** Paths (with query) of the two GETs, relative to the data service. */
  byKeyPath: string;
  listPath: string;
}

interface SendCommandOwner {
  sendCommand(command: { name: string }, ...rest: unknown[]): unknown;
}

const EJSON = mongoose.mongo.BSON.EJSON;

/** A data service of the bench process whose store commands are counted while `trace` runs. */
export interface TracedService {
  /** Sends a request to the service; throws unless it answers `status`. */
  request(
    method: string,
    path: string,
    authorization: string,
    body?: unknown,
    status?: number,
  ): Promise<void>;
  /** Runs `fn` `calls` times and counts the store commands it caused. */
  trace(fn: (call: number) => Promise<void>, calls: number): Promise<Trace>;
  /** The last `find` traced, as EJSON (canonical). */
  lastFind(): string;
  /** Key validation alone (the service's own validator). */
  validate: DataService["deps"]["keys"]["validate"];
  close(): Promise<void>;
}

export async function startTracedService(stack: Stack): Promise<TracedService> {
  const url = new URL(stack.mongoUrl);
  url.searchParams.set("monitorCommands", "true");
  // Every Redis command of the process is counted: keep the write-intent recoverer's periodic run
  // (its start-up run happens before tracing) out of the traces.
  const config = parseConfig(dataConfigSchema, {
    ...stack.dataEnv,
    MONGO_URL: url.toString(),
    PORT: "0",
    WRITE_RECOVERY_INTERVAL_MS: "3600000",
  });
  const service = await createDataService(config, createLogger("bench-probe", "silent"));
  const client = service.deps.tenants.db("_").client;

  let tracing = false;
  const redisSeen: string[] = [];
  const mongoSeen: { name: string; event: mongoose.mongo.CommandStartedEvent }[] = [];
  const proto = Redis.prototype as unknown as SendCommandOwner;
  const original = proto.sendCommand;
  proto.sendCommand = function (this: SendCommandOwner, command, ...rest) {
    if (tracing) redisSeen.push(command.name.toUpperCase());
    return original.call(this, command, ...rest);
  };
  client.on("commandStarted", (event) => {
    if (tracing) mongoSeen.push({ name: event.commandName, event });
  });

  const server = http.createServer(service.app.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const count = (names: string[]) =>
    names.reduce<Record<string, number>>((acc, n) => {
      acc[n] = (acc[n] ?? 0) + 1;
      return acc;
    }, {});
  return {
    validate: (carrier, scope) => service.deps.keys.validate(carrier, scope),
    async request(method, path, authorization, body, status = 200) {
      const r = await fetch(`${base}${path}`, {
        method,
        headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status !== status) throw new Error(`probe ${method} ${path}: ${r.status} ${text}`);
    },
    async trace(fn, calls) {
      redisSeen.length = 0;
      mongoSeen.length = 0;
      tracing = true;
      try {
        for (let i = 0; i < calls; i++) await fn(i);
      } finally {
        tracing = false;
      }
      return {
        calls,
        redis: count(redisSeen),
        mongo: count(mongoSeen.map((m) => m.name)),
        redisPerCall: redisSeen.length / calls,
        mongoPerCall: mongoSeen.length / calls,
      };
    },
    lastFind() {
      const finds = mongoSeen.filter((m) => m.name === "find");
      const event = finds[finds.length - 1]?.event;
      if (!event) throw new Error("the probe saw no find command");
      const c = event.command;
      const captured: CapturedFind = {
        db: event.databaseName,
        collection: c.find,
        filter: c.filter ?? {},
        options: {
          sort: c.sort,
          skip: c.skip,
          limit: c.limit,
          projection: c.projection,
          maxTimeMS: c.maxTimeMS,
        },
      };
      return EJSON.stringify(captured, { relaxed: false });
    },
    async close() {
      proto.sendCommand = original;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await service.close();
    },
  };
}

export async function probeRoundTrips(stack: Stack, req: ProbeRequests, calls = 50): Promise<ProbeResult> {
  const probe = await startTracedService(stack);
  const get = (path: string) => probe.request("GET", path, req.authorization);
  try {
    // Warm the project cache (its first load reads the metadata once) and the connections.
    await get(req.byKeyPath);
    await get(req.listPath);
    const carrier = { method: "GET", authorization: req.authorization, authParams: [] };
    const validation = await probe.trace(async () => {
      await probe.validate(carrier, req.scope);
    }, calls);
    const byKey = await probe.trace(() => get(req.byKeyPath), calls);
    const keyQuery = probe.lastFind();
    const list = await probe.trace(() => get(req.listPath), calls);
    const listQuery = probe.lastFind();
    return { validation, byKey, list, queries: { key: keyQuery, list: listQuery } };
  } finally {
    await probe.close();
  }
}

export function parseCapturedFind(text: string): CapturedFind {
  return EJSON.parse(text, { relaxed: false }) as CapturedFind;
}
