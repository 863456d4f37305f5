/**
 * The data service's write path, wired from the configuration (docs/architecture.md): the row
 * locks (an in-process queue in front of Redis row locks and write intents), the write loop, the
 * recoverer of abandoned intents, and with FEED_ENABLED the change feed with its outbox and sweeper;
 * committed writes wait for a Redis replica when WRITE_REPLICA_WAIT_MS asks for it.
 */
import type { Redis } from "ioredis";
import type { Connection } from "mongoose";
import { Gauge } from "prom-client";
import type { DataConfig } from "../../../../shared/config/config.ts";
import type { Metrics } from "../../../../shared/http/metrics.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { replicaAckKey } from "../../../../shared/redis/key-layout.ts";
import { ReplicaAcks } from "../../../../shared/redis/replica-acks.ts";
import { ChangeFeed } from "./change-feed.ts";
import { FeedOutbox } from "./feed-outbox.ts";
import { OutboxSweeper } from "./feed-outbox-sweeper.ts";
import { undoWrites } from "./guarded-writes.ts";
import { IntentRecoverer } from "./intent-recoverer.ts";
import { retryPolicy } from "./retry-policy.ts";
import { RowLocks } from "./row-locks.ts";
import { RowQueue } from "./row-queue.ts";
import { countRows } from "./storage-stats.ts";
import type { TenantDatabases } from "./tenant-databases.ts";
import type { WriteLoop } from "./tenant-rows.ts";
import { TransactionFeed } from "./transaction-feed.ts";
import { WriteIntents } from "./write-intents.ts";
import { createWriteLoop } from "./write-loop.ts";
import { type WriteReplication, writeReplication } from "./write-replication.ts";

/**
 * The write path: the row locks (in-process queue in front of Redis row locks
 * and write intents), the write loop, and the recoverer that completes write
 * intents left behind by failed requests or dead processes.
 */
export function createWritePath(
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
export function replicaAcknowledgement(
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
