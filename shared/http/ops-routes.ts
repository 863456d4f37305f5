/** /healthz (process alive), /readyz (every store answers), /metrics (Prometheus). */
import type Router from "@koa/router";
import type { Metrics } from "./metrics.ts";

export type ReadinessCheck = () => Promise<void>;

export function addOpsRoutes(
  router: Router,
  metrics: Metrics,
  checks: Record<string, ReadinessCheck>,
  isShuttingDown: () => boolean,
): void {
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  router.get("/readyz", async (ctx) => {
    const results: Record<string, string> = {};
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await withTimeout(check(), 2000);
          results[name] = "ok";
        } catch {
          results[name] = "unavailable";
        }
      }),
    );
    const ready = !isShuttingDown() && Object.values(results).every((r) => r === "ok");
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? "ready" : "not ready", checks: results };
  });
  router.get("/metrics", async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timeout")), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
