/** Composition root of the auth service: Redis, the data-service client, every dependency wired explicitly. */
import { Redis } from "ioredis";
import type { AuthConfig } from "../../../shared/config.ts";
import { createMetrics } from "../../../shared/http/metrics.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import type { Logger } from "../../../shared/logger.ts";
import { reportRedisErrors } from "../../../shared/store-errors.ts";
import { type AuthDeps, buildAuthApp } from "./app.ts";
import { createDataServiceClient } from "./clients/data-service-client.ts";
import { LoginThrottle } from "./store/login-throttle.ts";

export interface AuthService {
  app: ReturnType<typeof buildAuthApp>;
  deps: AuthDeps;
  lifecycle: Lifecycle;
  close(): Promise<void>;
}

export async function createAuthService(config: AuthConfig, logger: Logger): Promise<AuthService> {
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2 });
  const metrics = createMetrics("auth");
  const storeErrors = metrics.counter("tessera_store_errors_total", "Store connection errors by store", [
    "store",
  ]);
  reportRedisErrors(redis, logger, "redis", () => storeErrors.inc({ store: "redis" }));
  const lifecycle: Lifecycle = { shuttingDown: false };
  const deps: AuthDeps = {
    logger,
    metrics,
    lifecycle,
    readiness: {
      redis: async () => {
        await redis.ping();
      },
    },
    keys: new KeyStore(redis, config.REDIS_PREFIX, config.KEY_RETENTION_SECONDS),
    data: createDataServiceClient(config.DATA_SERVICE_URL, config.SERVICE_TOKEN[0]!),
    throttle: new LoginThrottle(redis, config.REDIS_PREFIX, {
      failuresBeforeLockout: config.LOGIN_FAILURES_BEFORE_LOCKOUT,
      baseSeconds: config.LOGIN_LOCKOUT_BASE_SECONDS,
      maxSeconds: config.LOGIN_LOCKOUT_MAX_SECONDS,
      perAddressPerHour: config.LOGIN_FAILURES_PER_ADDRESS_PER_HOUR,
    }),
    adminTokens: config.ADMIN_TOKEN,
    maxBodyBytes: 64 * 1024,
    now: Date.now,
  };
  return {
    app: buildAuthApp(deps),
    deps,
    lifecycle,
    async close() {
      await redis.quit().catch(() => {});
    },
  };
}
