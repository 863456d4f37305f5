/**
 * The data service with key validation removed (bench only): the production
 * composition root (createDataService) builds every dependency, then a second
 * app is built from the same deps with a key validator that returns a fixed
 * record — the record of BENCH_KEY, read once at start-up — without touching
 * Redis. Everything else on the request path is the real code.
 *
 * Env: the data service's own, plus BENCH_KEY, BENCH_ACCOUNT, BENCH_PROJECT.
 */
import { buildDataApp } from "../../../services/data/src/app.ts";
import { createDataService } from "../../../services/data/src/service.ts";
import { dataConfigSchema, parseConfig } from "../../../shared/config/config.ts";
import { createMetrics } from "../../../shared/http/metrics.ts";
import { serve } from "../../../shared/http/serve.ts";
import type { KeyValidator } from "../../../shared/keys/key-validation.ts";
import { createLogger } from "../../../shared/logger.ts";

const config = parseConfig(dataConfigSchema, process.env);
const logger = createLogger("data-without-validation", config.LOG_LEVEL);
const service = await createDataService(config, logger);
const record = await service.deps.keys.validate(
  { method: "GET", authorization: `Tessera ${process.env.BENCH_KEY}:1`, authParams: [] },
  { account: process.env.BENCH_ACCOUNT!, project: process.env.BENCH_PROJECT! },
);
const fixed: KeyValidator = { validate: async () => record };
await serve({
  // A registry of its own: building an app registers its counters, which a registry takes once.
  app: buildDataApp({ ...service.deps, keys: fixed, metrics: createMetrics("data") }),
  host: config.HOST,
  port: config.PORT,
  graceMs: config.SHUTDOWN_GRACE_MS,
  logger,
  lifecycle: service.lifecycle,
  close: service.close,
});
