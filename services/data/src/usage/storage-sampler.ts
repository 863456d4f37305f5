/**
 * Measures every account's storage from the store's statistics
 * (store/storage-stats.ts) every USAGE_SAMPLE_SECONDS: one process per round
 * (whoever sets the round's mark in Redis first), account after account. Each
 * measurement becomes the account's snapshot (what the usage answer and the
 * storage quota read) and gauge points of its series. `measure` measures one
 * account at once (after a clean-up, so the tenant need not wait a round).
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "../../../../shared/logger.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { usageSamplerKey } from "../../../../shared/redis/key-layout.ts";
import type { MetaStore } from "../store/meta-store.ts";
import { PeriodicRun } from "../store/periodic-run.ts";
import { type DatabaseStats, databaseStats } from "../store/storage-stats.ts";
import type { TenantDatabases } from "../store/tenant-databases.ts";
import { projectMetric } from "./usage-meter.ts";
import type { UsageSeries, UsageSnapshot } from "./usage-series.ts";

export interface StorageSamplerDeps {
  meta: MetaStore;
  databases: TenantDatabases;
  series: UsageSeries;
  redis: RedisClient;
  prefix: string;
  intervalMs: number;
  logger: Logger;
  now?: () => number;
  /** After a whole round this process made: every account's snapshot and how long it took. */
  onRound?: (snapshots: Map<string, UsageSnapshot>, seconds: number) => void;
}

const PAGE = 200;

/** An account's snapshot from its database's statistics: its projects' tables by collection prefix. */
export function snapshotOf(
  at: number,
  stats: DatabaseStats,
  projects: { name: string; collectionPrefix: string }[],
): UsageSnapshot {
  const snapshot: UsageSnapshot = { at, storedBytes: stats.bytes, rows: 0, projects: {} };
  for (const { name, collectionPrefix } of projects) {
    const tables: UsageSnapshot["projects"][string] = {};
    for (const [collection, counts] of stats.collections) {
      if (!collection.startsWith(collectionPrefix)) continue;
      tables[collection.slice(collectionPrefix.length)] = counts;
      snapshot.rows += counts.rows;
    }
    snapshot.projects[name] = tables;
  }
  return snapshot;
}

/** The gauge points of a snapshot: the account's bytes and rows, and each project's. */
export function snapshotGauges(snapshot: UsageSnapshot): Map<string, number> {
  const gauges = new Map<string, number>([
    ["g.bytes", snapshot.storedBytes],
    ["g.rows", snapshot.rows],
  ]);
  for (const [project, tables] of Object.entries(snapshot.projects)) {
    let rows = 0;
    let bytes = 0;
    for (const t of Object.values(tables)) {
      rows += t.rows;
      bytes += t.bytes;
    }
    gauges.set(projectMetric(project, "g.rows"), rows);
    gauges.set(projectMetric(project, "g.bytes"), bytes);
  }
  return gauges;
}

export class StorageSampler {
  readonly #deps: StorageSamplerDeps;
  readonly #run: PeriodicRun;
  readonly #id = randomBytes(8).toString("hex");
  readonly #now: () => number;

  constructor(deps: StorageSamplerDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#run = new PeriodicRun(
      () => this.#round(),
      deps.intervalMs,
      deps.logger,
      "storage measurement failed",
    );
  }

  start(): void {
    this.#run.start();
  }

  stop(): Promise<void> {
    return this.#run.stop();
  }

  /** Measures one account now; undefined when it does not exist. */
  async measure(account: string): Promise<UsageSnapshot | undefined> {
    const { meta, databases, series } = this.#deps;
    const doc = await meta.getAccount(account);
    if (!doc) return undefined;
    const projects = await meta.listProjects(account);
    const stats = await databaseStats(databases, meta.accountDatabase(doc));
    const at = this.#now();
    const snapshot = snapshotOf(
      at,
      stats,
      projects.map((p) => ({ name: p.name, collectionPrefix: p.storage.collectionPrefix })),
    );
    await series.setSnapshot(account, snapshot);
    await series.add(account, at, new Map(), snapshotGauges(snapshot));
    return snapshot;
  }

  /** One round, when this process is the one to make it. */
  async #round(): Promise<void> {
    const { redis, prefix, intervalMs, meta, logger } = this.#deps;
    // The mark lives a little less than an interval, so the next round is anybody's again.
    const mine = await redis.set(
      usageSamplerKey(prefix),
      this.#id,
      "PX",
      Math.max(100, intervalMs - 50),
      "NX",
    );
    if (mine !== "OK") return;
    const started = performance.now();
    const snapshots = new Map<string, UsageSnapshot>();
    for (let after = ""; ; ) {
      const accounts = await meta.listAccounts(after, PAGE);
      for (const doc of accounts) {
        if (this.#run.stopped) return;
        try {
          const snapshot = await this.measure(doc._id);
          if (snapshot) snapshots.set(doc._id, snapshot);
        } catch (err) {
          logger.warn(
            { account: doc._id, error: err instanceof Error ? err.name : typeof err },
            "an account's storage was not measured this round",
          );
        }
      }
      const last = accounts.at(-1);
      if (accounts.length < PAGE || !last) break;
      after = last._id;
    }
    this.#deps.onRound?.(snapshots, (performance.now() - started) / 1000);
  }
}
