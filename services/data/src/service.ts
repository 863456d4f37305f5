/**
 * Composition root of the data service: connects the stores named by the
 * configuration and wires every dependency explicitly. Used by main.ts and by
 * the integration tests (which listen on an ephemeral port).
 */
import type { Redis } from "ioredis";
import type { MongoClient } from "mongodb";
import mongoose, { type Connection } from "mongoose";
import { Gauge } from "prom-client";
import { adminKeyCheck } from "../../../shared/admin-access/data-access.ts";
import { type DataConfig, rateLimitSettings } from "../../../shared/config/config.ts";
import { createMetrics, type Metrics } from "../../../shared/http/metrics.ts";
import type { Lifecycle } from "../../../shared/http/serve.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import { createKeyValidator } from "../../../shared/keys/key-validation.ts";
import type { Logger } from "../../../shared/logger.ts";
import { planRequestLimit } from "../../../shared/quotas/plan-store.ts";
import { AccountRateLimitStore, RequestRateLimiter } from "../../../shared/rate-limits/request-limits.ts";
import { createRedisClient, type RedisClient } from "../../../shared/redis/clients.ts";
import { reportRedisErrors } from "../../../shared/redis/connection-log.ts";
import { projectChangedChannel, replicaAckKey } from "../../../shared/redis/key-layout.ts";
import { ReplicaAcks } from "../../../shared/redis/replica-acks.ts";
import { buildDataApp, type DataDeps } from "./app.ts";
import { createPasswordHasher } from "./credentials/passwords.ts";
import { createAdminDirectory } from "./domain/admin/account-admins.ts";
import { createAuditTrail } from "./domain/admin/audit-trail.ts";
import { mapSecrets } from "./domain/definition/definition-secrets.ts";
import { checkFilterText } from "./domain/model/filter-check.ts";
import { programKeyPrefix } from "./domain/model/project-model.ts";
import { SharedModels } from "./domain/model/shared-models.ts";
import { definitionIndexes } from "./domain/model/table-indexes.ts";
import { FeedHub } from "./feed/feed-hub.ts";
import { type DispatchMetrics, type DispatchTiming, WebhookDispatcher } from "./hooks/dispatcher.ts";
import type { LiveLimits } from "./http/live-stream.ts";
import { createCustomProviderFactory } from "./providers/custom-provider-factory.ts";
import { createOidcProviderFactory } from "./providers/oidc-provider-factory.ts";
import { createProviderRegistry } from "./providers/provider-registry.ts";
import { createLogic } from "./rules/index.ts";
import { createScriptRunner } from "./scripts/script-runner.ts";
import { AdminStore } from "./store/admin-store.ts";
import { AuditStore } from "./store/audit-store.ts";
import { ChangeFeed } from "./store/change-feed.ts";
import { DefinitionSealing } from "./store/definition-sealing.ts";
import { FeedOutbox } from "./store/feed-outbox.ts";
import { OutboxSweeper } from "./store/feed-outbox-sweeper.ts";
import { undoWrites } from "./store/guarded-writes.ts";
import { purgeIncarnation } from "./store/incarnation-purge.ts";
import { IntentRecoverer } from "./store/intent-recoverer.ts";
import { Leases } from "./store/leases.ts";
import { createMetaIndexes } from "./store/meta-model.ts";
import { MetaStore, type ProjectWithStorage } from "./store/meta-store.ts";
import { ProjectCache } from "./store/project-cache.ts";
import { retryPolicy } from "./store/retry-policy.ts";
import { RevisionStore } from "./store/revision-store.ts";
import { RowLocks } from "./store/row-locks.ts";
import { RowQueue } from "./store/row-queue.ts";
import { SecretBox } from "./store/secret-box.ts";
import { StorageNames } from "./store/storage-names.ts";
import { countRows } from "./store/storage-stats.ts";
import { DeletedStorageSweeper } from "./store/storage-sweeper.ts";
import { TableIndexStore } from "./store/table-index-store.ts";
import { TenantDatabases } from "./store/tenant-databases.ts";
import type { WriteLoop } from "./store/tenant-rows.ts";
import { TenantStore } from "./store/tenant-store.ts";
import { TransactionFeed } from "./store/transaction-feed.ts";
import { UserStore } from "./store/user-store.ts";
import { WebhookStore } from "./store/webhook-store.ts";
import { WriteIntents } from "./store/write-intents.ts";
import { createWriteLoop } from "./store/write-loop.ts";
import { type WriteReplication, writeReplication } from "./store/write-replication.ts";
import { createUsage, type UsageParts } from "./usage/usage-wiring.ts";

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
  const compile = (stored: ProjectWithStorage) => {
    const { account, name, uid, revision, storage } = stored;
    const model = sharedModels.model(
      { account, name, uid, revision, storage },
      stored.definition,
      `${account}/${name}`,
    );
    // Once per revision and process: projects stored before their indexes existed get them too.
    void tableIndexes.applyRevision(stored, definitionIndexes(model.definition));
    return model;
  };
  // Validation, and removal of deleted projects' keys: the auth service mints keys, so records are
  // never kept past expiry from here.
  const keyStore = new KeyStore(redis, config.REDIS_PREFIX, 0, {
    legacyNames: config.REDIS_MODE !== "cluster",
  });
  const revisions = new RevisionStore(connection, config.QUERY_TIMEOUT_MS, sealing);
  if (secrets.seals) void resealDefinitions(meta, revisions, logger);
  const sweeper = new DeletedStorageSweeper({
    meta,
    tenants,
    logger,
    purge: (entry) => purgeIncarnation({ meta, users, admins, revisions, keyStore }, entry),
  });
  sweeper.start();
  recoverer.start();
  // Only writes committed in transactions leave events in the outbox (store/feed-outbox.ts).
  if (outboxSweeper && (await databases.supportsTransactions())) outboxSweeper.start();
  const hasher = createPasswordHasher(config.ARGON2_MEMORY_KIB);
  const lifecycle: Lifecycle = { shuttingDown: false };
  const sandboxCalls = metrics.counter(
    "tessera_sandbox_calls_total",
    "Sandbox calls by outcome (ok, timeout, …)",
    ["outcome"],
  );
  const sandboxRestarts = metrics.counter(
    "tessera_sandbox_process_restarts_total",
    "Sandbox host processes replaced, by reason (catastrophic, crashed, unresponsive)",
    ["reason"],
    { reason: ["catastrophic", "crashed", "unresponsive"] },
  );
  const sandboxRefusals = metrics.counter(
    "tessera_sandbox_refusals_total",
    "Sandbox calls refused (429) by their account's fair share, by reason (cpu, queue)",
    ["reason"],
    { reason: ["cpu", "queue"] },
  );
  // One sandbox pool per process, for custom providers, reactive logic rules and API versions' JavaScript alike.
  const custom = createCustomProviderFactory({
    config,
    logger,
    onSandboxCall: (outcome) => sandboxCalls.inc({ outcome }),
    onSandboxProcessRestart: (reason) => sandboxRestarts.inc({ reason }),
    onSandboxRefusal: (reason) => sandboxRefusals.inc({ reason }),
    onSandboxCpuTime: meter && ((account, ms) => meter.count(account, "cpu.ms", ms)),
    sandboxCpuBudgetOf: async (account) => (await usage.plans.limitsOf(account)).limits.sandboxCpuMs,
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
    forget: (project) => custom.pool.dropUnder(programKeyPrefix(project)),
  });
  await projects.start();
  const webhookStore = feed && new WebhookStore(redis, config.REDIS_PREFIX);
  const dispatcher =
    webhookStore &&
    config.WEBHOOK_DELIVERY &&
    new WebhookDispatcher({
      store: webhookStore,
      project: (account, name) => projects.get(account, name),
      timing: webhookTiming(config),
      allowLoopback: config.SANDBOX_ALLOW_LOOPBACK_FETCH,
      secrets,
      metrics: webhookMetrics(metrics, usage),
      logger,
    });
  const logic = createLogic({ pool: custom.pool });
  const scripts = createScriptRunner({
    pool: custom.pool,
    tenants,
    readsPerCall: config.SANDBOX_READS_PER_CALL,
    logger,
  });
  const rateLimits = rateLimitSettings(config);
  // Not ready before the sandbox is: the first logins after a start need not wait for a process.
  await custom.ready();
  // A change holds its lease for a few queries; a lease outlives any such sequence.
  const leaseMs = Math.max(10_000, 4 * config.QUERY_TIMEOUT_MS);
  const directory = createAdminDirectory(meta, admins);
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
      custom: custom.providerFor,
      oidc: createOidcProviderFactory({ allowLoopback: config.SANDBOX_ALLOW_LOOPBACK_FETCH, logger }),
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
  void createMetaIndexes(connection, logger);
  if (dispatcher) dispatcher.start();
  usage.start();
  return {
    app: buildDataApp(deps),
    deps,
    lifecycle,
    sweeper,
    mongo: connection.getClient(),
    async close() {
      if (dispatcher) await dispatcher.stop();
      await usage.stop();
      projects.stop();
      await sweeper.stop();
      await recoverer.stop();
      await outboxSweeper?.stop();
      hub?.close();
      await custom.close();
      await Promise.allSettled([
        redis.quit(),
        subscriber.quit(),
        replicaConnection?.quit(),
        connection.close(),
      ]);
    },
  };
}

/**
 * The write path: the row locks (in-process queue in front of Redis row locks
 * and write intents), the write loop, and the recoverer that completes write
 * intents left behind by failed requests or dead processes.
 */
function createWritePath(
  config: DataConfig,
  stores: { databases: TenantDatabases; meta: Connection },
  redis: RedisClient,
  metrics: Metrics,
  logger: Logger,
  replicated: WriteReplication | undefined,
): {
  writeLoop: WriteLoop;
  recoverer: IntentRecoverer;
  feed: ChangeFeed | undefined;
  outboxSweeper: OutboxSweeper | undefined;
  intents: WriteIntents;
} {
  const { databases } = stores;
  const policy = retryPolicy({
    lockWaitMs: config.QUERY_TIMEOUT_MS,
    undoWindowMs: config.WRITE_UNDO_WINDOW_MS,
    leaseMs: config.WRITE_LEASE_MS,
  });
  const intents = new WriteIntents(redis, config.REDIS_PREFIX);
  const left = metrics.counter(
    "tessera_write_intents_left_total",
    "Write requests that could not complete or undo their writes; their intent was left for recovery",
    [],
  );
  const recovered = metrics.counter(
    "tessera_write_intents_recovered_total",
    "Abandoned write intents completed (undone) by recovery",
    [],
  );
  new Gauge({
    name: "tessera_write_intents_pending",
    help: "Write intents whose lease ran out, waiting for recovery (their rows stay locked)",
    registers: [metrics.registry],
    async collect() {
      try {
        this.set((await intents.count()).expired);
      } catch {
        // Redis unreachable: keep the last value rather than fail the scrape.
      }
    },
  });
  const locks = new RowLocks({
    queue: new RowQueue(),
    intents,
    policy,
    logger,
    onLeft: () => left.inc(),
    replicated,
    countRows: (database, collection) => countRows(databases, database, collection),
  });
  const recoverer = new IntentRecoverer({
    intents,
    undo: (account, writes, mayWrite) => undoWrites(databases, account, writes, mayWrite),
    leaseMs: policy.leaseMs,
    intervalMs: config.WRITE_RECOVERY_INTERVAL_MS,
    logger,
    onRecovered: () => recovered.inc(),
  });
  const feed = config.FEED_ENABLED
    ? createChangeFeed(config, stores, redis, metrics, logger, replicated)
    : undefined;
  return {
    writeLoop: createWriteLoop({ store: databases, locks, policy, logger, feed }),
    recoverer,
    feed: feed?.events,
    outboxSweeper: feed?.sweeper,
    intents,
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

function webhookTiming(config: DataConfig): DispatchTiming {
  return {
    concurrency: config.WEBHOOK_CONCURRENCY,
    accountConcurrency: config.WEBHOOK_ACCOUNT_CONCURRENCY,
    subscriptionConcurrency: config.WEBHOOK_SUBSCRIPTION_CONCURRENCY,
    circuit: {
      timeouts: config.WEBHOOK_CIRCUIT_TIMEOUTS,
      // Doubled up to the retries' cap, never below its own first cool-down.
      backoff: {
        baseMs: config.WEBHOOK_CIRCUIT_OPEN_MS,
        capMs: Math.max(config.WEBHOOK_BACKOFF_CAP_MS, config.WEBHOOK_CIRCUIT_OPEN_MS),
      },
    },
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    pollMs: config.WEBHOOK_POLL_MS,
    claimIdleMs: config.WEBHOOK_CLAIM_IDLE_MS,
    retryWindowMs: config.WEBHOOK_RETRY_WINDOW_SECONDS * 1000,
    backoff: { baseMs: config.WEBHOOK_BACKOFF_BASE_MS, capMs: config.WEBHOOK_BACKOFF_CAP_MS },
    logLength: config.WEBHOOK_LOG_LENGTH,
  };
}

/** The webhook deliveries' metrics (docs/operations.md), and their count in each account's usage. */
function webhookMetrics(metrics: Metrics, usage: UsageParts): DispatchMetrics {
  const attempts = metrics.counter(
    "tessera_webhook_attempts_total",
    "Webhook delivery attempts by outcome (delivered, failed: retried later, dead: parked as a dead letter)",
    ["outcome"],
    { outcome: ["delivered", "failed", "dead"] },
  );
  const lost = metrics.counter(
    "tessera_webhook_events_trimmed_total",
    "Change-feed events trimmed (FEED_MAX_LENGTH, FEED_MAX_AGE_SECONDS) before a webhook subscription read them",
    [],
  );
  return {
    attempt: (outcome, _latencyMs, where) => {
      attempts.inc({ outcome });
      usage.meter?.count(where.account, `hook.${outcome}`);
    },
    lost: (events) => lost.inc(events),
  };
}

/**
 * The change feed the write path appends to, and for writes committed in MongoDB transactions its
 * outbox and the outbox's sweeper (docs/realtime.md, operations.md §6b).
 */
function createChangeFeed(
  config: DataConfig,
  { meta, databases }: { meta: Connection; databases: TenantDatabases },
  redis: RedisClient,
  metrics: Metrics,
  logger: Logger,
  replicated: WriteReplication | undefined,
) {
  const outboxEvents = metrics.counter(
    "tessera_feed_outbox_events_total",
    "Change-feed events of transactions left in the feed outbox by their writer (deferred) and appended from there by the sweeper (swept)",
    ["outcome"],
    { outcome: ["deferred", "swept"] },
  );
  const retention = { maxLength: config.FEED_MAX_LENGTH, maxAgeMs: config.FEED_MAX_AGE_SECONDS * 1000 };
  const events = new ChangeFeed(redis, config.REDIS_PREFIX, retention);
  const outbox = new FeedOutbox(meta, databases);
  const transactions = new TransactionFeed({
    feed: events,
    outbox,
    replicated,
    onDeferred: (count, reason) => {
      outboxEvents.inc({ outcome: "deferred" }, count);
      logger.warn(
        { events: count, reason },
        "a committed write's change-feed events wait in the outbox for the sweeper",
      );
    },
  });
  const sweeper = new OutboxSweeper({
    feed: events,
    outbox,
    replicated,
    intervalMs: config.WRITE_RECOVERY_INTERVAL_MS,
    logger,
    onAppended: (count) => outboxEvents.inc({ outcome: "swept" }, count),
  });
  return { events, transactions, sweeper };
}

/**
 * Committed writes wait for a Redis replica (WRITE_REPLICA_WAIT_MS; docs/realtime.md#failover).
 * Not on a Redis Cluster: there WAIT would be needed on each slot's primary.
 */
function replicaAcknowledgement(
  config: DataConfig,
  connection: Redis | undefined,
  metrics: Metrics,
  logger: Logger,
): WriteReplication | undefined {
  if (!connection) return undefined;
  const unacknowledged = metrics.counter(
    "tessera_writes_unreplicated_total",
    "Writes answered before a Redis replica acknowledged them (WRITE_REPLICA_WAIT_MS): a failover could lose their events",
    [],
  );
  const acks = new ReplicaAcks(connection, replicaAckKey(config.REDIS_PREFIX), config.WRITE_REPLICA_WAIT_MS);
  return writeReplication(acks, logger, () => unacknowledged.inc());
}

/**
 * Once at start-up, in the background: seals under the current SECRETS_KEY the provider secrets of
 * stored definitions (projects and revisions) that are stored as they were or under an older key,
 * so that an older key can be retired (docs/operations.md §9).
 */
async function resealDefinitions(meta: MetaStore, revisions: RevisionStore, logger: Logger): Promise<void> {
  try {
    const projects = await meta.resealDefinitions();
    const revised = await revisions.resealDefinitions();
    if (projects + revised > 0)
      logger.info(
        { projects, revisions: revised },
        "definitions' secrets sealed under the current SECRETS_KEY",
      );
  } catch (err) {
    logger.warn(
      { error: err instanceof Error ? err.name : typeof err },
      "definitions' secrets not sealed again; the next start tries again",
    );
  }
}
