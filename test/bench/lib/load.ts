/**
 * Load generation with autocannon, in the bench process (the servers run in
 * their own processes). Latencies are taken from autocannon's per-response
 * event (float milliseconds) rather than its histogram, whose resolution is a
 * whole millisecond — too coarse for the sub-millisecond paths compared here.
 */
import { createRequire } from "node:module";

/** The part of autocannon's API the bench uses (the package ships no types). */
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
}

interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  requests?: AutocannonRequest[];
  timeout?: number;
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}

interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(
    event: "response",
    listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
  ): void;
}

const require = createRequire(import.meta.url);
const autocannon = require("autocannon") as (options: AutocannonOptions) => AutocannonInstance;

export interface Target {
  /** Absolute URL; with `paths`, its origin only matters. */
  url: string;
  method?: "GET" | "POST" | "PUT" | "DELETE";
  headers?: Record<string, string>;
  body?: string;
  /** Called for every request: a new path and/or body (e.g. to rotate over keys or rows). */
  next?: () => { path?: string; body?: string };
}

export interface Measurement {
  /** Completed requests per second (every status). */
  rps: number;
  /** Latency percentiles of 2xx responses, milliseconds. */
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  durationSeconds: number;
}

/** One stretch of load on one target. */
export interface Slice {
  responses: number;
  durationSeconds: number;
  /** 2xx latencies, ms. */
  latencies: number[];
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

/** Merges the slices of one target into one measurement. */
export function summarize(slices: Slice[]): Measurement {
  const sorted = Float64Array.from(slices.flatMap((s) => s.latencies)).sort();
  const requests = slices.reduce((n, s) => n + s.responses, 0);
  const durationSeconds = slices.reduce((n, s) => n + s.durationSeconds, 0);
  const statusCodes: Record<string, number> = {};
  for (const s of slices)
    for (const [code, n] of Object.entries(s.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    rps: durationSeconds > 0 ? requests / durationSeconds : 0,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    requests,
    non2xx: slices.reduce((n, s) => n + s.non2xx, 0),
    errors: slices.reduce((n, s) => n + s.errors, 0),
    statusCodes,
    durationSeconds,
  };
}

export async function load(target: Target, connections: number, durationSeconds: number): Promise<Slice> {
  const headers: Record<string, string> = { ...target.headers };
  if (target.body !== undefined || target.next) headers["content-type"] ??= "application/json";
  const options: AutocannonOptions = {
    url: target.url,
    connections,
    duration: durationSeconds,
    method: target.method ?? "GET",
    headers,
    body: target.body,
    timeout: 30,
  };
  if (target.next) {
    const next = target.next;
    options.requests = [
      {
        setupRequest: (request) => {
          const change = next();
          return { ...request, ...change };
        },
      },
    ];
  }
  const latencies: number[] = [];
  let responses = 0;
  const instance = autocannon(options);
  instance.on("response", (_client, statusCode, _bytes, responseTime) => {
    responses++;
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result = await instance;
  return {
    responses,
    durationSeconds: result.duration,
    latencies,
    non2xx: result.non2xx,
    errors: result.errors,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([k, v]) => [k, v.count])),
  };
}
