/**
 * The limits of an account's plan as the data service applies them: what a
 * write is held to (rows per table, checked by the row counts under the
 * write's locks; stored bytes, from the last measurement) and the count
 * limits of admin changes (projects, tables, users), each checked where the
 * change is serialised. Reads the plan store and the last measurement
 * through short-lived caches, so a plain write costs no Redis call of its own
 * most of the time.
 */
import {
  PER_ACCOUNT_CACHE_BYTES,
  perAccountCache,
  readThrough,
  type TimedRead,
} from "../../../../shared/cache/per-account-cache.ts";
import { type KeyLimitOf, keyLimitOf } from "../../../../shared/quotas/key-limit.ts";
import type { PlanStore } from "../../../../shared/quotas/plan-store.ts";
import {
  type CountLimit,
  countRefusal,
  type EffectiveLimits,
  type LimitName,
} from "../../../../shared/quotas/plans.ts";
import type { WriteQuota } from "../store/tenant-rows.ts";
import type { UsageSeries, UsageSnapshot } from "./usage-series.ts";

export type { CountLimit };

/** Heap bytes of a usage snapshot (a few counters per table) beyond a cache entry's own. */
const SNAPSHOT_BYTES = 1024;

export interface AccountQuotasDeps {
  plans: PlanStore;
  series: UsageSeries;
  cacheMs: number;
  now?: () => number;
  /** Told of every refusal, by limit (Prometheus). */
  onRefused?: (limit: LimitName) => void;
}

export class AccountQuotas {
  readonly #deps: AccountQuotasDeps;
  readonly #now: () => number;
  /** The plan's apiKeysPerProject, as the key store applies it (imports make keys here). */
  readonly keyLimit: KeyLimitOf;
  /** Each account's last measurement as read, the most recently used accounts' within a memory budget. */
  readonly #snapshots = perAccountCache<TimedRead<UsageSnapshot | undefined>>(
    PER_ACCOUNT_CACHE_BYTES,
    SNAPSHOT_BYTES,
  );

  constructor(deps: AccountQuotasDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.keyLimit = keyLimitOf(deps.plans, (limit) => this.refused(limit));
  }

  limitsOf(account: string): Promise<EffectiveLimits> {
    return this.#deps.plans.limitsOf(account);
  }

  /** The account's last measurement, read again at most every cacheMs. */
  snapshotOf(account: string): Promise<UsageSnapshot | undefined> {
    const options = { now: this.#now(), maxAgeMs: this.#deps.cacheMs };
    return readThrough(this.#snapshots, account, options, () => this.#deps.series.snapshot(account));
  }

  /** The account's stored bytes as last measured (undefined: not measured yet). */
  async storedBytesOf(account: string): Promise<number | undefined> {
    return (await this.snapshotOf(account))?.storedBytes;
  }

  /** One limit of the account's plan (null: none). */
  async limitOf(account: string, limit: LimitName): Promise<number | null> {
    return (await this.limitsOf(account)).limits[limit];
  }

  /** Forgets the cached measurement (a new one was just made). */
  measured(account: string): void {
    this.#snapshots.delete(account);
  }

  /** What a write of the account is held to. */
  async writeQuota(account: string): Promise<WriteQuota> {
    const { plan, limits } = await this.limitsOf(account);
    const quota: WriteQuota = { plan, rowsPerTable: limits.rowsPerTable };
    const bytes = limits.storedBytes;
    if (bytes !== null) {
      const used = (await this.snapshotOf(account))?.storedBytes ?? 0;
      if (used >= bytes) quota.storageFull = { used, limit: bytes };
    }
    return quota;
  }

  /**
   * Refuses (403/4032) adding `adding` to `used` of a count limit of the account's plan when the sum
   * passes it. Call it where the change is serialised (under its lease), with the use read there.
   */
  async checkCount(account: string, limit: CountLimit, used: number, adding = 1): Promise<void> {
    if (adding <= 0) return;
    const { plan, limits } = await this.limitsOf(account);
    const value = limits[limit];
    if (value === null || used + adding <= value) return;
    this.refused(limit);
    throw countRefusal(limit, value, used, plan);
  }

  /** Counts a refusal made elsewhere (the write path's). */
  refused(limit: LimitName): void {
    this.#deps.onRefused?.(limit);
  }
}
