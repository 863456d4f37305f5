/**
 * Composition root of the data service: connects the stores named by the
 * configuration and wires every dependency explicitly. Used by main.ts and by
 * the integration tests (which listen on an ephemeral port).
 */
import { Redis } from "ioredis";
import mongoose, { type Connection } from "mongoose";
import type { DataConfig } from "../../../shared/config.ts";
import { createMetrics } from "../../../shared/http/metrics.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import { createKeyValidator } from "../../../shared/keys/key-validation.ts";
import type { Logger } from "../../../shared/logger.ts";
import { reportRedisErrors } from "../../../shared/store-errors.ts";
import { buildDataApp, type DataDeps } from "./app.ts";
import { createCustomProviderFactory } from "./auth/custom-provider-factory.ts";
import { createPasswordHasher } from "./auth/passwords.ts";
import { createProviderRegistry } from "./auth/provider-registry.ts";
import { checkFilterText } from "./domain/filter-check.ts";
import { parseProjectDefinition } from "./domain/project-definition.ts";
import { compileProject } from "./domain/project-model.ts";
import { createLogic } from "./logic/index.ts";
import { MetaStore, type StoredProject } from "./store/meta-store.ts";
import { ProjectCache } from "./store/project-cache.ts";
import { TenantStore } from "./store/tenant-store.ts";

export interface DataService {
  app: ReturnType<typeof buildDataApp>;
  deps: DataDeps;
  lifecycle: Lifecycle;
  close(): Promise<void>;
}

/**
 * Waits for MongoDB instead of exiting: a pod started before its database is
 * reachable waits (under its startup probe) rather than crash-looping.
 */
async function connectMongo(config: DataConfig, logger: Logger): Promise<Connection> {
  for (let attempt = 1; ; attempt++) {
    const connection = mongoose.createConnection(config.MONGO_URL, {
      dbName: config.META_DB,
      serverSelectionTimeoutMS: 5000,
      autoIndex: false,
    });
    try {
      return await connection.asPromise();
    } catch (err) {
      await connection.close().catch(() => {});
      logger.warn({ attempt, error: (err as Error).message }, "MongoDB is not reachable yet; retrying");
      await new Promise((r) => setTimeout(r, Math.min(1000 * attempt, 5000)));
    }
  }
}

export async function createDataService(config: DataConfig, logger: Logger): Promise<DataService> {
  const redisOptions = { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true };
  const redis = new Redis(config.REDIS_URL, redisOptions);
  // A subscribed connection may not run INFO, which the ready check sends on reconnect.
  const subscriber = new Redis(config.REDIS_URL, { ...redisOptions, enableReadyCheck: false });
  const metrics = createMetrics("data");
  const storeErrors = metrics.counter("tessera_store_errors_total", "Store connection errors by store", [
    "store",
  ]);
  for (const [client, name] of [
    [redis, "redis"],
    [subscriber, "redis-subscriber"],
  ] as const) {
    reportRedisErrors(client, logger, name, () => storeErrors.inc({ store: name }));
  }
  const connection = await connectMongo(config, logger);
  connection.getClient().on("serverHeartbeatFailed", () => storeErrors.inc({ store: "mongodb" }));
  const meta = new MetaStore(connection, config.QUERY_TIMEOUT_MS);
  const tenants = new TenantStore(
    connection.getClient(),
    config.TENANT_DB_PREFIX,
    config.QUERY_TIMEOUT_MS,
    redis,
    config.REDIS_PREFIX,
  );
  const compile = (stored: StoredProject) => {
    const parsed = parseProjectDefinition(stored.definition);
    if (!parsed.ok) throw new Error(`stored definition of ${stored.account}/${stored.name} no longer parses`);
    const compiled = compileProject(
      { account: stored.account, name: stored.name, uid: stored.uid, revision: stored.revision },
      parsed.definition,
    );
    if (!compiled.ok)
      throw new Error(`stored definition of ${stored.account}/${stored.name} no longer compiles`);
    return compiled.model;
  };
  const projects = new ProjectCache({
    meta,
    subscriber,
    publisher: redis,
    channel: `${config.REDIS_PREFIX}project-changed`,
    compile,
    logger,
  });
  await projects.start();
  const hasher = createPasswordHasher(config.ARGON2_MEMORY_KIB);
  const lifecycle: Lifecycle = { shuttingDown: false };
  const sandboxCalls = metrics.counter(
    "tessera_sandbox_calls_total",
    "Sandbox calls by outcome (ok, timeout, …)",
    ["outcome"],
  );
  // One sandbox pool per process, for custom providers and reactive logic rules alike.
  const custom = createCustomProviderFactory({
    config,
    logger,
    onSandboxCall: (outcome) => sandboxCalls.inc({ outcome }),
  });
  const logic = createLogic({ pool: custom.pool });
  const deps: DataDeps = {
    logger,
    metrics,
    lifecycle,
    readiness: {
      redis: async () => {
        await redis.ping();
      },
      mongodb: () => tenants.ping(),
    },
    keys: createKeyValidator(new KeyStore(redis, config.REDIS_PREFIX, 0), config.AUTH_SCHEMES),
    meta,
    tenants,
    projects,
    providers: createProviderRegistry({ meta, hasher, custom: custom.providerFor }),
    hasher,
    checkFilter: checkFilterText,
    checkModel: logic.checkModel,
    planExtension: logic.planExtension,
    adminTokens: config.ADMIN_TOKEN,
    serviceTokens: config.SERVICE_TOKEN,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    maxBodyBytes: config.MAX_BODY_BYTES,
  };
  return {
    app: buildDataApp(deps),
    deps,
    lifecycle,
    async close() {
      projects.stop();
      await custom.close();
      await Promise.allSettled([redis.quit(), subscriber.quit(), connection.close()]);
    },
  };
}
