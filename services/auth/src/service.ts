/** Composition root of the auth service: Redis, the data-service client, every dependency wired explicitly. */
import { type AuthConfig, planSettings, rateLimitSettings } from "../../../shared/config/config.ts";
import { createMetrics } from "../../../shared/http/metrics.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import type { Logger } from "../../../shared/logger.ts";
import { keyLimitOf } from "../../../shared/quotas/key-limit.ts";
import { PlanStore, planRequestLimit } from "../../../shared/quotas/plan-store.ts";
import { RequestRateLimiter } from "../../../shared/rate-limits/request-limits.ts";
import { createRedisClient } from "../../../shared/redis/clients.ts";
import { reportRedisErrors } from "../../../shared/redis/connection-log.ts";
import { type AuthDeps, buildAuthApp } from "./app.ts";
import { adminDirectoryOf, auditReporterOf } from "./clients/account-administration.ts";
import { createDataServiceClient } from "./clients/data-service-client.ts";
import { createIdentityFieldsCache } from "./domain/identity-fields-cache.ts";
import { AttemptThrottle } from "./store/attempt-throttle.ts";

export interface AuthService {
  app: ReturnType<typeof buildAuthApp>;
  deps: AuthDeps;
  lifecycle: Lifecycle;
  close(): Promise<void>;
}

export async function createAuthService(config: AuthConfig, logger: Logger): Promise<AuthService> {
  const redis = createRedisClient(config);
  const metrics = createMetrics("auth");
  const storeErrors = metrics.counter("tessera_store_errors_total", "Store connection errors by store", [
    "store",
  ]);
  reportRedisErrors(redis, logger, "redis", () => storeErrors.inc({ store: "redis" }));
  const lifecycle: Lifecycle = { shuttingDown: false };
  const unacknowledged = metrics.counter(
    "tessera_revocations_unacknowledged_total",
    "Key revocations no Redis replica acknowledged within a second (they may not survive a failover)",
    [],
  );
  const keys = new KeyStore(redis, config.REDIS_PREFIX, config.KEY_RETENTION_SECONDS, {
    legacyNames: config.REDIS_MODE !== "cluster",
    onUnacknowledged: () => {
      unacknowledged.inc();
      logger.warn("a key revocation was not acknowledged by a Redis replica within a second");
    },
  });
  if (config.REDIS_MODE !== "cluster") {
    const renamed = await keys.renameLegacyKeys();
    if (renamed > 0) logger.info({ renamed }, "key records renamed to the hash-tagged layout");
  }
  const data = createDataServiceClient(config.DATA_SERVICE_URL, config.SERVICE_TOKEN[0]);
  const rateLimits = rateLimitSettings(config);
  const plans = new PlanStore(redis, config.REDIS_PREFIX, planSettings(config));
  const quotaRefusals = metrics.counter(
    "tessera_quota_refusals_total",
    "Keys refused by a limit of the account's plan, by limit",
    ["limit"],
    { limit: ["apiKeysPerProject"] },
  );
  const throttleSettings = {
    failuresBeforeLockout: config.LOGIN_FAILURES_BEFORE_LOCKOUT,
    baseSeconds: config.LOGIN_LOCKOUT_BASE_SECONDS,
    maxSeconds: config.LOGIN_LOCKOUT_MAX_SECONDS,
    perAddressPerHour: config.LOGIN_FAILURES_PER_ADDRESS_PER_HOUR,
    queueWaitMs: config.LOGIN_QUEUE_WAIT_SECONDS * 1000,
  };
  const deps: AuthDeps = {
    logger,
    metrics,
    lifecycle,
    readiness: {
      redis: async () => {
        await redis.ping();
      },
    },
    keys,
    keyLimit: keyLimitOf(plans, (limit) => quotaRefusals.inc({ limit })),
    data,
    identityFields: createIdentityFieldsCache(data),
    // The account's plan sets its requests per window here too: logins and data requests share its bucket.
    rateLimits:
      rateLimits && new RequestRateLimiter(redis, config.REDIS_PREFIX, rateLimits, planRequestLimit(plans)),
    throttle: new AttemptThrottle(redis, `${config.REDIS_PREFIX}throttle:login:`, throttleSettings),
    adminThrottle: new AttemptThrottle(redis, `${config.REDIS_PREFIX}throttle:adminlogin:`, throttleSettings),
    directory: adminDirectoryOf(data),
    audit: auditReporterOf(data),
    adminTokens: config.ADMIN_TOKEN,
    schemes: config.AUTH_SCHEMES,
    adminKeyLifetimeSeconds: config.ADMIN_KEY_LIFETIME_SECONDS,
    trustedProxies: config.TRUSTED_PROXIES,
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
