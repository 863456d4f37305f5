/**
 * Composition root of the data service: connects the stores named by the
 * configuration and wires every dependency explicitly. Used by main.ts and by
 * the integration tests (which listen on an ephemeral port).
 */
import type { Redis } from "ioredis";
import type { MongoClient } from "mongodb";
import mongoose, { type Connection } from "mongoose";
import { adminKeyCheck } from "../../../shared/admin-access/data-access.ts";
import { type DataConfig, rateLimitSettings } from "../../../shared/config/config.ts";
import { createMetrics } from "../../../shared/http/metrics.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import { createKeyValidator } from "../../../shared/keys/key-validation.ts";
import type { Logger } from "../../../shared/logger.ts";
import { planRequestLimit } from "../../../shared/quotas/plan-store.ts";
import { AccountRateLimitStore, RequestRateLimiter } from "../../../shared/rate-limits/request-limits.ts";
import { createRedisClient } from "../../../shared/redis/clients.ts";
import { reportRedisErrors } from "../../../shared/redis/connection-log.ts";
import { projectChangedChannel } from "../../../shared/redis/key-layout.ts";
import { buildDataApp, type DataDeps } from "./app.ts";
import { BackgroundJobs } from "./background-jobs.ts";
import { createPasswordHasher } from "./credentials/passwords.ts";
import { createAdminDirectory } from "./domain/admin/account-admins.ts";
import { createAuditTrail } from "./domain/admin/audit-trail.ts";
import { mapSecrets } from "./domain/definition/definition-secrets.ts";
import { checkFilterText } from "./domain/model/filter-check.ts";
import { programKeyPrefix } from "./domain/model/project-model.ts";
import { SharedModels } from "./domain/model/shared-models.ts";
import { storedProjectCompiler } from "./domain/model/stored-project.ts";
import { FeedHub } from "./feed/feed-hub.ts";
import { dispatchMetrics, dispatchTiming } from "./hooks/dispatch-deps.ts";
import { WebhookDispatcher } from "./hooks/dispatcher.ts";
import type { LiveLimits } from "./http/live-stream.ts";
import { createCustomProviderFactory } from "./providers/custom-provider-factory.ts";
import { createOidcProviderFactory } from "./providers/oidc-provider-factory.ts";
import { createProviderRegistry } from "./providers/provider-registry.ts";
import { createLogic } from "./rules/index.ts";
import { createSandbox } from "./sandbox/create-sandbox.ts";
import { createScriptRunner } from "./scripts/script-runner.ts";
import { AdminStore } from "./store/admin-store.ts";
import { AuditStore } from "./store/audit-store.ts";
import { DefinitionSealing } from "./store/definition-sealing.ts";
import { purgeIncarnation } from "./store/incarnation-purge.ts";
import { Leases } from "./store/leases.ts";
import { createMetaIndexes } from "./store/meta-model.ts";
import { MetaStore } from "./store/meta-store.ts";
import { ProjectCache } from "./store/project-cache.ts";
import { RevisionStore } from "./store/revision-store.ts";
import { SecretBox } from "./store/secret-box.ts";
import { SecretResealing } from "./store/secret-resealing.ts";
import { StorageNames } from "./store/storage-names.ts";
import { DeletedStorageSweeper } from "./store/storage-sweeper.ts";
import { TableIndexStore } from "./store/table-index-store.ts";
import { TenantDatabases } from "./store/tenant-databases.ts";
import { TenantStore } from "./store/tenant-store.ts";
import { UserStore } from "./store/user-store.ts";
import { WebhookStore } from "./store/webhook-store.ts";
import { createWritePath, replicaAcknowledgement } from "./store/write-path.ts";
import { createUsage } from "./usage/usage-wiring.ts";

export interface DataService {
  app: ReturnType<typeof buildDataApp>;
  deps: DataDeps;
  lifecycle: Lifecycle;
  /** Drops what writes in flight recreated under the names of deleted accounts and projects. */
  sweeper: DeletedStorageSweeper;
  /** The service's MongoDB client (for tools and tests that watch the commands it sends). */
  mongo: MongoClient;
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
  const redis = createRedisClient(config, "command");
  const subscriber = createRedisClient(config, "subscriber");
  // A connection of its own for WAIT, which blocks the connection it is sent on (write-replication.ts).
  const replicaConnection =
    config.WRITE_REPLICA_WAIT_MS > 0 && config.REDIS_MODE !== "cluster"
      ? (createRedisClient(config, "command") as Redis)
      : undefined;
  const metrics = createMetrics("data");
  const storeErrors = metrics.counter("tessera_store_errors_total", "Store connection errors by store", [
    "store",
  ]);
  for (const [client, name] of [
    [redis, "redis"],
    [subscriber, "redis-subscriber"],
    ...(replicaConnection ? [[replicaConnection, "redis-replica-wait"] as const] : []),
  ] as const) {
    reportRedisErrors(client, logger, name, () => storeErrors.inc({ store: name }));
  }
  const connection = await connectMongo(config, logger);
  connection.getClient().on("serverHeartbeatFailed", () => storeErrors.inc({ store: "mongodb" }));
  // Secrets the platform reads back (webhook signing secrets, provider configs) are sealed at rest.
  const secrets = new SecretBox(config.SECRETS_KEY ?? []);
  if (!secrets.seals)
    logger.warn("SECRETS_KEY is not set: webhook signing secrets and provider configs are stored unsealed");
  const sealing = new DefinitionSealing(secrets, logger, mapSecrets);
  const meta = new MetaStore(
    connection,
    config.QUERY_TIMEOUT_MS,
    new StorageNames(config.TENANT_DB_PREFIX),
    sealing,
  );
  const admins = new AdminStore(connection, config.QUERY_TIMEOUT_MS);
  const users = new UserStore(connection, config.QUERY_TIMEOUT_MS);
  const audit = new AuditStore(connection, config.QUERY_TIMEOUT_MS, {
    client: redis,
    prefix: config.REDIS_PREFIX,
  });
  const databases = new TenantDatabases(connection.getClient(), config.QUERY_TIMEOUT_MS);
  const tenants = new TenantStore(databases, redis, config.REDIS_PREFIX);
  const replicated = replicaAcknowledgement(config, replicaConnection, metrics, logger);
  const { writeLoop, recoverer, feed, outboxSweeper, intents } = createWritePath(
    config,
    { databases, meta: connection },
    redis,
    metrics,
    logger,
    replicated,
  );
  const usage = createUsage(config, { redis, meta, databases, intents }, metrics, logger);
  const meter = usage.meter;
  const hub = feed && new FeedHub(redis, () => createRedisClient(config, "command"), logger);
  const liveCuts = metrics.counter(
    "tessera_live_streams_cut_total",
    "Live queries ended because the client read slower than the changes came (it resumes)",
    [],
  );
  const tableIndexes = new TableIndexStore(databases, logger);
  // The project models' budget: for the models kept warm (each with its share of the compilation
  // it shares with others), and for the compilations kept to be shared.
  const cacheBytes = config.PROJECT_CACHE_MIB * 1024 * 1024;
  const modelBudget = Math.floor(cacheBytes * 0.75);
  const sharedModels = new SharedModels(Math.floor(cacheBytes * 0.25));
  // Once per revision and process: projects stored before their indexes existed get them too.
  const compile = storedProjectCompiler(sharedModels, (project, wanted) => {
    void tableIndexes.applyRevision(project, wanted);
  });
  // Validation, and removal of deleted projects' keys: the auth service mints keys, so records are
  // never kept past expiry from here.
  const keyStore = new KeyStore(redis, config.REDIS_PREFIX, 0, {
    legacyNames: config.REDIS_MODE !== "cluster",
  });
  const revisions = new RevisionStore(connection, config.QUERY_TIMEOUT_MS, sealing);
  const sweeper = new DeletedStorageSweeper({
    meta,
    tenants,
    logger,
    purge: (entry) => purgeIncarnation({ meta, users, admins, revisions, keyStore }, entry),
  });
  const hasher = createPasswordHasher(config.ARGON2_MEMORY_KIB);
  const lifecycle: Lifecycle = { shuttingDown: false };
  // One sandbox per process, for custom providers, reactive logic rules and API versions' JavaScript alike.
  const sandbox = createSandbox(config, metrics, {
    logger,
    onCpuTime: meter && ((account, ms) => meter.count(account, "cpu.ms", ms)),
    cpuBudgetOf: async (account) => (await usage.plans.limitsOf(account)).limits.sandboxCpuMs,
  });
  const projects = new ProjectCache({
    meta,
    subscriber,
    publisher: redis,
    channel: projectChangedChannel(config.REDIS_PREFIX),
    compile,
    budgetBytes: modelBudget,
    held: (model) => sharedModels.held(model),
    released: (model) => sharedModels.released(model),
    logger,
    forget: (project) => sandbox.pool.dropUnder(programKeyPrefix(project)),
  });
  await projects.start();
  const webhookStore = feed && new WebhookStore(redis, config.REDIS_PREFIX);
  const dispatcher =
    webhookStore &&
    config.WEBHOOK_DELIVERY &&
    new WebhookDispatcher({
      store: webhookStore,
      project: (account, name) => projects.get(account, name),
      timing: dispatchTiming(config),
      allowLoopback: config.SANDBOX_ALLOW_LOOPBACK_FETCH,
      secrets,
      metrics: dispatchMetrics(metrics, (account, name) => usage.meter?.count(account, name)),
      logger,
    });
  const logic = createLogic({ pool: sandbox.pool });
  const scripts = createScriptRunner({
    pool: sandbox.pool,
    tenants,
    readsPerCall: config.SANDBOX_READS_PER_CALL,
    logger,
  });
  const rateLimits = rateLimitSettings(config);
  // Not ready before the sandbox is: the first logins after a start need not wait for a process.
  await sandbox.ready();
  // A change holds its lease for a few queries; a lease outlives any such sequence.
  const leaseMs = Math.max(10_000, 4 * config.QUERY_TIMEOUT_MS);
  const directory = createAdminDirectory(meta, admins);
  const providerCacheBytes = config.PROVIDER_CACHE_MIB * 1024 * 1024;
  const deps: DataDeps = {
    logger,
    metrics,
    lifecycle,
    readiness: {
      redis: async () => {
        await redis.ping();
      },
      mongodb: () => databases.ping(),
    },
    // Account administrators' keys open their account's projects (docs/data-api.md#administrators-keys).
    keys: createKeyValidator(keyStore, config.AUTH_SCHEMES, { adminKeys: adminKeyCheck(directory) }),
    rateLimits:
      rateLimits &&
      new RequestRateLimiter(redis, config.REDIS_PREFIX, rateLimits, planRequestLimit(usage.plans)),
    accountRateLimits: new AccountRateLimitStore(redis, config.REDIS_PREFIX),
    keyStore,
    authSchemes: config.AUTH_SCHEMES,
    meta,
    admins,
    users,
    directory,
    revisions,
    audit,
    auditTrail: createAuditTrail(meta, audit),
    leases: new Leases(redis, config.REDIS_PREFIX, { holdMs: leaseMs, waitMs: leaseMs }),
    tenants,
    indexes: tableIndexes,
    writeLoop,
    live: hub &&
      feed && {
        hub,
        feed,
        limits: liveLimits(config),
        onCut: () => liveCuts.inc(),
        accountLimit: async (account) => (await usage.plans.limitsOf(account)).limits.liveStreams,
        opened: meter && ((account, project) => meter.streamOpened(account, project)),
      },
    webhooks: webhookStore && {
      store: webhookStore,
      allowLoopback: config.SANDBOX_ALLOW_LOOPBACK_FETCH,
      secrets,
      maxPerProject: config.WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT,
    },
    projects,
    providers: createProviderRegistry({
      users,
      hasher,
      custom: createCustomProviderFactory({ pool: sandbox.pool, logger, budgetBytes: providerCacheBytes })
        .providerFor,
      oidc: createOidcProviderFactory({
        allowLoopback: config.SANDBOX_ALLOW_LOOPBACK_FETCH,
        logger,
        budgetBytes: providerCacheBytes,
      }),
    }),
    hasher,
    checkFilter: checkFilterText,
    planExtension: logic.planExtension,
    scripts,
    adminTokens: config.ADMIN_TOKEN,
    serviceTokens: config.SERVICE_TOKEN,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    trustedProxies: config.TRUSTED_PROXIES,
    maxBodyBytes: config.MAX_BODY_BYTES,
    keepImportedKeyValues: config.LAC_IMPORT_KEEP_KEY_VALUES,
    now: Date.now,
    writeQuota: (account) => usage.quotas.writeQuota(account),
    meterRequest:
      meter && ((account, project, kind, status) => meter.request(account, project, kind, status)),
    quotas: usage.quotas,
    usage: {
      plans: usage.plans,
      series: usage.series,
      measure: (account) => usage.measure(account),
      recount: (account) => usage.recount(account),
      forget: (account, database) => usage.forget(account, database),
    },
  };
  const app = buildDataApp(deps);
  // Started in this order once the app is built, stopped in reverse (usage last: deliveries count in it).
  const jobs = new BackgroundJobs();
  jobs.add("usage", usage);
  jobs.once("metadata indexes", () => createMetaIndexes(connection, logger));
  jobs.add("deleted-storage sweeper", sweeper);
  jobs.add("write-intent recovery", recoverer);
  // Only writes committed in transactions leave events in the outbox (store/feed-outbox.ts).
  jobs.add("feed outbox sweeper", outboxSweeper && (await databases.supportsTransactions()) && outboxSweeper);
  jobs.add(
    "secret re-sealing",
    secrets.seals &&
      new SecretResealing({ secrets, projects: meta, revisions, webhooks: webhookStore, logger }),
  );
  jobs.add("webhook dispatcher", dispatcher);
  jobs.start();
  return {
    app,
    deps,
    lifecycle,
    sweeper,
    mongo: connection.getClient(),
    async close() {
      await jobs.stop();
      projects.stop();
      hub?.close();
      await sandbox.close();
      await Promise.allSettled([
        redis.quit(),
        subscriber.quit(),
        replicaConnection?.quit(),
        connection.close(),
      ]);
    },
  };
}

function liveLimits(config: DataConfig): LiveLimits {
  return {
    perAccount: config.LIVE_MAX_STREAMS_PER_ACCOUNT,
    perKey: config.LIVE_MAX_STREAMS_PER_KEY,
    heartbeatMs: config.LIVE_HEARTBEAT_MS,
    keyCheckMs: config.LIVE_KEY_CHECK_MS,
    maxBufferBytes: config.LIVE_MAX_BUFFER_BYTES,
    maxHeldEvents: config.LIVE_MAX_HELD_EVENTS,
  };
}
