/**
 * An account's usage series in Redis (layout: usage-buckets.ts; keys:
 * shared/redis/key-layout.ts, all of one account in one hash slot): minute
 * buckets kept USAGE_MINUTE_RETENTION_HOURS, hour buckets kept
 * USAGE_RETENTION_DAYS, each period one hash that expires as a whole. A write
 * adds one process's counts of a few seconds (HINCRBY) or the store's
 * measurements (HSET) to both resolutions in one pipeline; a read fetches every
 * period of the range in one pipeline.
 */
import { z } from "zod";
import { type BatchCommand, batch } from "../../../../shared/redis/batch.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { usageSeriesKey, usageSnapshotKey } from "../../../../shared/redis/key-layout.ts";
import { readStoredJson } from "../../../../shared/stored-json.ts";
import {
  aggregate,
  bucketOf,
  periodOf,
  periodsCovering,
  type Resolution,
  resolutionFor,
  type SeriesPoint,
} from "./usage-buckets.ts";

export interface UsageRetention {
  minuteMs: number;
  hourMs: number;
}

/** The store's last measurement of an account: bytes, rows, and per project and table. */
export const usageSnapshotRecord = z.object({
  at: z.number(),
  storedBytes: z.number(),
  rows: z.number(),
  /** project → table → its rows and bytes. */
  projects: z.record(z.string(), z.record(z.string(), z.object({ rows: z.number(), bytes: z.number() }))),
});

export type UsageSnapshot = z.infer<typeof usageSnapshotRecord>;

/** Accounts whose additions go in one batch. */
const ADD_SLICE = 500;

/** What one account adds to its series at time `at`. */
export interface SeriesEntry {
  account: string;
  at: number;
  counts: ReadonlyMap<string, number>;
  gauges?: ReadonlyMap<string, number>;
}

export class UsageSeries {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #retention: UsageRetention;

  constructor(redis: RedisClient, prefix: string, retention: UsageRetention) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#retention = retention;
  }

  /** Adds `counts` (summed) and `gauges` (replaced) to the buckets of time `at`. */
  async add(
    account: string,
    at: number,
    counts: ReadonlyMap<string, number>,
    gauges: ReadonlyMap<string, number> = new Map(),
  ): Promise<void> {
    const [failed] = await this.addAll([{ account, at, counts, gauges }]);
    if (failed) throw failed.error;
  }

  /**
   * Adds each entry as `add` does, all in one batch (shared/redis/batch.ts): the cost of a flush
   * is its commands, not a round trip per account. Resolves to the entries that failed.
   */
  async addAll(entries: SeriesEntry[]): Promise<{ entry: SeriesEntry; error: Error }[]> {
    const written = entries.filter((e) => e.counts.size > 0 || (e.gauges?.size ?? 0) > 0);
    const failed: { entry: SeriesEntry; error: Error }[] = [];
    // In slices, so that no one pipeline holds Redis for long.
    for (let from = 0; from < written.length; from += ADD_SLICE) {
      const slice = written.slice(from, from + ADD_SLICE);
      const groups = await batch(
        this.#redis,
        slice.map((e) => this.#commands(e)),
      );
      groups.forEach((replies, i) => {
        const error = replies.find((reply) => reply instanceof Error);
        const entry = slice[i];
        if (error && entry) failed.push({ entry, error: error as Error });
      });
    }
    return failed;
  }

  /** The commands of one entry (all in the account's slot). */
  #commands({ account, at, counts, gauges = new Map() }: SeriesEntry): BatchCommand[] {
    const commands: BatchCommand[] = [];
    for (const resolution of ["m", "h"] as const) {
      const key = usageSeriesKey(this.#prefix, account, resolution, periodOf(resolution, at));
      const bucket = bucketOf(resolution, at);
      for (const [metric, n] of counts) commands.push(["hincrby", key, `${bucket}|${metric}`, Math.round(n)]);
      for (const [metric, n] of gauges)
        commands.push(["hset", key, `${bucket}|${metric}`, String(Math.round(n))]);
      const keep = resolution === "m" ? this.#retention.minuteMs : this.#retention.hourMs;
      // Kept from the end of its period on.
      commands.push(["pexpire", key, keep + (resolution === "m" ? 3_600_000 : 86_400_000)]);
    }
    return commands;
  }

  /** The points of [from, to) by `stepMs` (the resolution follows from the step: usage-buckets.ts). */
  async read(account: string, from: number, to: number, stepMs: number): Promise<SeriesPoint[]> {
    const resolution: Resolution = resolutionFor(stepMs);
    const periods = periodsCovering(resolution, from, to);
    const pipeline = this.#redis.pipeline();
    for (const period of periods) pipeline.hgetall(usageSeriesKey(this.#prefix, account, resolution, period));
    const results = (await pipeline.exec()) ?? [];
    const stored = new Map<string, Record<string, string>>();
    periods.forEach((period, i) => {
      const [err, fields] = results[i] ?? [null, {}];
      if (err) throw err;
      stored.set(period, (fields ?? {}) as Record<string, string>);
    });
    return aggregate(resolution, stored, from, to, stepMs);
  }

  async setSnapshot(account: string, snapshot: UsageSnapshot): Promise<void> {
    await this.#redis.set(usageSnapshotKey(this.#prefix, account), JSON.stringify(snapshot));
  }

  /** The last measurement of the account's storage; undefined before the first. */
  async snapshot(account: string): Promise<UsageSnapshot | undefined> {
    const text = await this.#redis.get(usageSnapshotKey(this.#prefix, account));
    return text === null ? undefined : readStoredJson(usageSnapshotRecord, "usage snapshot", text);
  }

  /** Forgets the account's measurement (deleted: a successor starts unmeasured); its series expire. */
  async drop(account: string): Promise<void> {
    await this.#redis.del(usageSnapshotKey(this.#prefix, account));
  }
}
