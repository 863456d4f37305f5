/**
 * The data service's metering and quotas, built from the configuration: the
 * plan store, the usage series, the in-process meter (when USAGE_METERING is
 * on), the storage sampler, the account quotas, and their Prometheus metrics.
 * Prometheus labels are bounded by construction: a limit's name, a request kind
 * and a status class, never an account or a project (those live in the usage
 * series the admin API answers).
 */
import { Gauge, Histogram } from "prom-client";
import { type DataConfig, planSettings } from "../../../../shared/config/config.ts";
import { USAGE_REQUEST_KINDS, USAGE_STATUS_CLASSES } from "../../../../shared/contracts/admin-api.ts";
import type { Metrics } from "../../../../shared/http/metrics.ts";
import type { Logger } from "../../../../shared/logger.ts";
import { PlanStore } from "../../../../shared/quotas/plan-store.ts";
import { LIMIT_NAMES } from "../../../../shared/quotas/plans.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import type { MetaStore } from "../store/meta-store.ts";
import { countRows, databaseStats } from "../store/storage-stats.ts";
import type { TenantDatabases } from "../store/tenant-databases.ts";
import type { WriteIntents } from "../store/write-intents.ts";
import { AccountQuotas } from "./account-quotas.ts";
import { ChangedAccounts } from "./changed-accounts.ts";
import { StorageSampler } from "./storage-sampler.ts";
import { UsageMeter } from "./usage-meter.ts";
import { usageWarnings } from "./usage-report.ts";
import { UsageSeries, type UsageSnapshot } from "./usage-series.ts";
import { UsageTotals } from "./usage-totals.ts";

export interface UsageParts {
  plans: PlanStore;
  series: UsageSeries;
  quotas: AccountQuotas;
  /** Absent when USAGE_METERING is off. */
  meter: UsageMeter | undefined;
  sampler: StorageSampler | undefined;
  measure(account: string): Promise<UsageSnapshot | undefined>;
  recount(account: string): Promise<Map<string, number>>;
  forget(account: string, database: string): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

export function createUsage(
  config: DataConfig,
  stores: { redis: RedisClient; meta: MetaStore; databases: TenantDatabases; intents: WriteIntents },
  metrics: Metrics,
  logger: Logger,
): UsageParts {
  const { redis, meta, databases, intents } = stores;
  const prefix = config.REDIS_PREFIX;
  const plans = new PlanStore(redis, prefix, planSettings(config));
  const series = new UsageSeries(redis, prefix, {
    minuteMs: config.USAGE_MINUTE_RETENTION_HOURS * 3_600_000,
    hourMs: config.USAGE_RETENTION_DAYS * 86_400_000,
  });
  const refusals = metrics.counter(
    "tessera_quota_refusals_total",
    "Writes and changes refused by a limit of the account's plan, by limit",
    ["limit"],
    { limit: LIMIT_NAMES },
  );
  const quotas = new AccountQuotas({
    plans,
    series,
    cacheMs: config.PLAN_CACHE_MS,
    onRefused: (limit) => refusals.inc({ limit }),
  });
  const changes = new ChangedAccounts(redis, prefix);
  const totals = new UsageTotals(redis, prefix);
  const meter = config.USAGE_METERING ? createMeter(config, series, changes, metrics, logger) : undefined;
  const measurements = {
    meta,
    databases,
    series,
    redis,
    prefix,
    sweep: config.USAGE_SWEEP_ACCOUNTS,
    logger,
    onMeasured: async (account: string, snapshot: UsageSnapshot | undefined) => {
      if (!snapshot) return totals.drop(account);
      await totals.record(account, snapshot.storedBytes, await limitStates(quotas, account, snapshot));
    },
  };
  const sampler = config.USAGE_METERING
    ? new StorageSampler({
        ...measurements,
        changes,
        intervalMs: config.USAGE_SAMPLE_SECONDS * 1000,
        onRound: samplerMetrics(metrics, totals),
      })
    : undefined;
  const measurer = sampler ?? new StorageSampler({ ...measurements, intervalMs: 3_600_000 });
  return {
    plans,
    series,
    quotas,
    meter,
    sampler,
    async measure(account) {
      const snapshot = await measurer.measure(account);
      quotas.measured(account);
      return snapshot;
    },
    async recount(account) {
      const doc = await meta.getAccount(account);
      if (!doc) return new Map();
      const database = meta.accountDatabase(doc);
      const counts = new Map<string, number>();
      for (const collection of (await databaseStats(databases, database)).collections.keys())
        counts.set(collection, await countRows(databases, database, collection, "exact"));
      await intents.resetRows(database, counts);
      return counts;
    },
    async forget(account, database) {
      await plans.drop(account);
      await series.drop(account);
      await totals.drop(account);
      await intents.dropRows(database);
    },
    start() {
      meter?.start();
      sampler?.start();
    },
    async stop() {
      await sampler?.stop();
      await meter?.stop();
    },
  };
}

function createMeter(
  config: DataConfig,
  series: UsageSeries,
  changes: ChangedAccounts,
  metrics: Metrics,
  logger: Logger,
): UsageMeter {
  const flushes = new Histogram({
    name: "tessera_usage_flush_duration_seconds",
    help: "Time one process took to add its counted usage to the accounts' series in Redis",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [metrics.registry],
  });
  const failures = metrics.counter(
    "tessera_usage_flush_failures_total",
    "Flushes of counted usage that failed (the counts are kept for the next one)",
    [],
  );
  const requests = metrics.counter(
    "tessera_usage_requests_total",
    "Requests counted in the accounts' usage, by kind and status class (all accounts together)",
    ["kind", "status"],
  );
  for (const kind of USAGE_REQUEST_KINDS)
    for (const status of USAGE_STATUS_CLASSES) requests.inc({ kind, status }, 0);
  const meter = new UsageMeter({
    series,
    flushMs: config.USAGE_FLUSH_MS,
    logger,
    onFlush: (seconds, failed) => {
      flushes.observe(seconds);
      if (failed) failures.inc();
    },
    onRequest: (kind, status) => requests.inc({ kind, status }),
    onWritten: (accounts) => changes.mark(accounts),
  });
  return meter;
}

/** The account's `limit|state` pairs at 80 % (warning) or 100 % (full) of its plan, as measured. */
async function limitStates(
  quotas: AccountQuotas,
  account: string,
  snapshot: UsageSnapshot,
): Promise<string[]> {
  const limits = await quotas.limitsOf(account);
  const projects = Object.entries(snapshot.projects).map(([name, tables]) => ({
    name,
    tables: Object.keys(tables).length,
  }));
  return usageWarnings({ account, limits, snapshot, projects }).map((w) => `${w.limit}|${w.state}`);
}

/** After each round: how many accounts are near (warning) or at (full) each limit, and the bytes of all. */
function samplerMetrics(metrics: Metrics, totals: UsageTotals) {
  const accounts = new Gauge({
    name: "tessera_usage_accounts",
    help: "Accounts at 80 % (warning) or 100 % (full) of a limit of their plan, by limit, as of their last measurement",
    labelNames: ["limit", "state"],
    registers: [metrics.registry],
  });
  const bytes = new Gauge({
    name: "tessera_usage_stored_bytes",
    help: "Bytes stored by all accounts together, as of their last measurement",
    registers: [metrics.registry],
  });
  const duration = new Gauge({
    name: "tessera_usage_sample_duration_seconds",
    help: "How long the last storage round took (dbStats and $collStats of the accounts it measured)",
    registers: [metrics.registry],
  });
  const measured = new Gauge({
    name: "tessera_usage_sample_accounts",
    help: "Accounts the last storage round measured (those written since the one before, and its sweep)",
    registers: [metrics.registry],
  });
  return (count: number, seconds: number) => {
    duration.set(seconds);
    measured.set(count);
    void totals
      .read()
      .then((now) => {
        accounts.reset();
        for (const limit of LIMIT_NAMES)
          for (const state of ["warning", "full"])
            accounts.set({ limit, state }, now.states.get(`${limit}|${state}`) ?? 0);
        bytes.set(now.bytes);
      })
      .catch(() => {
        // Redis did not answer: the gauges keep their last values.
      });
  };
}
