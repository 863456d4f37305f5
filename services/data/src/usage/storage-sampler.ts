/**
 * Measures accounts' storage from the store's statistics
 * (store/storage-stats.ts) every USAGE_SAMPLE_SECONDS: one process per round
 * (whoever sets the round's mark in Redis first). A round measures the
 * accounts written since the last one (changed-accounts.ts) and, so that what
 * changed without a write (an index built later, an undone write) is seen too,
 * the next `sweep` accounts in name order, on from where the last round's
 * sweep stopped: its cost follows the writes, not the number of accounts.
 * Each measurement becomes the account's snapshot (what the usage answer and
 * the storage quota read) and gauge points of its series; an account that
 * does not change keeps its last. `measure` measures one account at once
 * (after a clean-up, so the tenant need not wait a round).
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "../../../../shared/logger.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { usageRoundsKey, usageSamplerKey } from "../../../../shared/redis/key-layout.ts";
import type { MetaStore } from "../store/meta-store.ts";
import { PeriodicRun } from "../store/periodic-run.ts";
import { type DatabaseStats, databaseStats } from "../store/storage-stats.ts";
import type { TenantDatabases } from "../store/tenant-databases.ts";
import type { ChangedAccounts } from "./changed-accounts.ts";
import { projectMetric } from "./usage-meter.ts";
import type { UsageSeries, UsageSnapshot } from "./usage-series.ts";

export interface StorageSamplerDeps {
  meta: MetaStore;
  databases: TenantDatabases;
  series: UsageSeries;
  redis: RedisClient;
  prefix: string;
  /** The accounts written since the last round (absent: only `measure` is used). */
  changes?: ChangedAccounts;
  intervalMs: number;
  /** Accounts measured per round beyond those written, in turn (USAGE_SWEEP_ACCOUNTS). */
  sweep: number;
  logger: Logger;
  now?: () => number;
  /** After each measurement: the account's snapshot, or undefined when the account is gone. */
  onMeasured?: (account: string, snapshot: UsageSnapshot | undefined) => Promise<void>;
  /** After a whole round this process made: how many accounts it measured and how long it took. */
  onRound?: (measured: number, seconds: number) => void;
}

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
    if (!doc) {
      await this.#deps.onMeasured?.(account, undefined);
      return undefined;
    }
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
    await this.#deps.onMeasured?.(account, snapshot);
    return snapshot;
  }

  /** One round, when this process is the one to make it. */
  async #round(): Promise<void> {
    const { redis, prefix, intervalMs, logger, changes } = this.#deps;
    if (!changes) return;
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
    const accounts = new Set(await changes.take());
    for (const account of await this.#swept()) accounts.add(account);
    const unmeasured: string[] = [];
    for (const account of accounts) {
      // Stopped: what this round took stays taken, for the next round.
      if (this.#run.stopped) return;
      try {
        await this.measure(account);
      } catch (err) {
        unmeasured.push(account);
        logger.warn(
          { account, error: err instanceof Error ? err.name : typeof err },
          "an account's storage was not measured this round",
        );
      }
    }
    await changes.done(unmeasured);
    this.#deps.onRound?.(accounts.size - unmeasured.length, (performance.now() - started) / 1000);
  }

  /** The next `sweep` accounts after where the last round's sweep stopped (from the first again after the last). */
  async #swept(): Promise<string[]> {
    const { redis, prefix, meta, sweep } = this.#deps;
    if (sweep === 0) return [];
    const cursor = usageRoundsKey(prefix, "sweep");
    const after = (await redis.get(cursor)) ?? "";
    const accounts = (await meta.listAccounts(after, sweep)).map((doc) => doc._id);
    await redis.set(cursor, accounts.length < sweep ? "" : (accounts[accounts.length - 1] ?? ""));
    return accounts;
  }
}
