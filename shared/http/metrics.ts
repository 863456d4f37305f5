/**
 * Prometheus metrics of a service: request count and latency by route template
 * and status, plus whatever counters the service registers on the same registry.
 */
import type { Context, Middleware, Next } from "koa";
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

export interface Metrics {
  registry: Registry;
  middleware: Middleware;
  /**
   * A counter of the registry (the same one when asked again). `shown`: label values to report at 0
   * before anything counted them (`{ outcome: ["ok", "failed"] }`), so that dashboards and rate()
   * see every series from the start; a counter without labels is reported at 0 anyway.
   */
  counter(
    name: string,
    help: string,
    labelNames: string[],
    shown?: Record<string, readonly string[]>,
  ): Counter<string>;
}

export function createMetrics(service: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requests = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency by route template and status",
    labelNames: ["method", "route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const middleware: Middleware = async (ctx: Context, next: Next) => {
    const end = requests.startTimer();
    try {
      await next();
    } finally {
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
      end({ method: ctx.method, route: String(route), status: String(ctx.status) });
    }
  };
  return {
    registry,
    middleware,
    // Idempotent: an app built twice on one registry shares its counters.
    counter: (name, help, labelNames, shown = {}) => {
      const counter =
        (registry.getSingleMetric(name) as Counter<string> | undefined) ??
        new Counter({ name, help, labelNames, registers: [registry] });
      for (const [label, values] of Object.entries(shown))
        for (const value of values) counter.inc({ [label]: value }, 0);
      return counter;
    },
  };
}
