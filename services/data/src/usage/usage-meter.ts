/**
 * Counts each account's usage in this process — requests by kind and status
 * class, sandbox CPU time, webhook deliveries, live-stream time — and adds
 * the counts to the accounts' series every USAGE_FLUSH_MS (usage-series.ts).
 * Counting is a map increment on the request path; Redis sees one batch of
 * every account's commands per flush. Counts a flush could not write are kept and added
 * to the next one. The accounts it saw write (a data write, an admin call)
 * are marked at each flush, so the next storage round measures them
 * (changed-accounts.ts).
 */
import type { USAGE_REQUEST_KINDS, USAGE_STATUS_CLASSES } from "../../../../shared/contracts/admin-api.ts";
import type { Logger } from "../../../../shared/logger.ts";
import { PeriodicRun } from "../store/periodic-run.ts";
import type { SeriesEntry, UsageSeries } from "./usage-series.ts";

/** What a request was, for its count: a read, a write, a live query, an admin API call. */
export type RequestKind = (typeof USAGE_REQUEST_KINDS)[number];

/** The status class of an HTTP status (1xx counts as 2xx: the request was served). */
export function statusClass(status: number): (typeof USAGE_STATUS_CLASSES)[number] {
  if (status >= 500) return "5xx";
  if (status >= 400) return "4xx";
  if (status >= 300) return "3xx";
  return "2xx";
}

/** The metric of a project's own count (`p:<project>:<metric>`; project names hold no `:` or `|`). */
export function projectMetric(project: string, metric: string): string {
  return `p:${project}:${metric}`;
}

export interface UsageMeterDeps {
  series: UsageSeries;
  flushMs: number;
  logger: Logger;
  now?: () => number;
  /** Told how long each flush took and whether it failed (Prometheus). */
  onFlush?: (seconds: number, failed: boolean) => void;
  /** Told at each flush the accounts that wrote since the last (their storage may have changed). */
  onWritten?: (accounts: ReadonlySet<string>) => Promise<void>;
  /** Told each request's kind and status class, of whichever account (Prometheus). */
  onRequest?: (kind: RequestKind, status: (typeof USAGE_STATUS_CLASSES)[number]) => void;
}

interface OpenStream {
  account: string;
  project: string;
  /** Since when its time is not counted yet. */
  since: number;
}

export class UsageMeter {
  readonly #deps: UsageMeterDeps;
  readonly #now: () => number;
  /** account → metric → count not yet written. */
  #pending = new Map<string, Map<string, number>>();
  /** Accounts that wrote since the last flush. */
  #written = new Set<string>();
  readonly #streams = new Set<OpenStream>();
  readonly #run: PeriodicRun;

  constructor(deps: UsageMeterDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#run = new PeriodicRun(() => this.flush(), deps.flushMs, deps.logger, "usage flush failed");
  }

  /** Adds `n` to the account's metric (and to the project's, when one is named). */
  count(account: string, metric: string, n = 1, project?: string): void {
    if (!(n > 0)) return;
    let metrics = this.#pending.get(account);
    if (!metrics) {
      metrics = new Map();
      this.#pending.set(account, metrics);
    }
    metrics.set(metric, (metrics.get(metric) ?? 0) + n);
    if (project !== undefined) {
      const own = projectMetric(project, metric);
      metrics.set(own, (metrics.get(own) ?? 0) + n);
    }
  }

  /** One request of the account to a project (or to the admin API: no project). */
  request(account: string, project: string | undefined, kind: RequestKind, status: number): void {
    const cls = statusClass(status);
    this.#deps.onRequest?.(kind, cls);
    if ((kind === "write" || kind === "admin") && this.#deps.onWritten) this.#written.add(account);
    this.count(account, `req.${kind}.${cls}`);
    if (project !== undefined) this.count(account, projectMetric(project, `req.${kind}`));
  }

  /** A live query opened: its time is counted until the returned function is called. */
  streamOpened(account: string, project: string): () => void {
    const stream: OpenStream = { account, project, since: this.#now() };
    this.#streams.add(stream);
    return () => {
      if (!this.#streams.delete(stream)) return;
      this.#countStream(stream, this.#now());
    };
  }

  /** Tells who wrote since the last flush; on failure they are told again at the next. */
  async #markWritten(): Promise<void> {
    const written = this.#written;
    if (written.size === 0 || !this.#deps.onWritten) return;
    this.#written = new Set();
    try {
      await this.#deps.onWritten(written);
    } catch (err) {
      for (const account of written) this.#written.add(account);
      this.#deps.logger.warn(
        { accounts: written.size, error: err instanceof Error ? err.name : typeof err },
        "accounts that wrote not marked for the storage round; the next flush tries again",
      );
    }
  }

  #countStream(stream: OpenStream, now: number): void {
    this.count(stream.account, "live.ms", now - stream.since, stream.project);
    stream.since = now;
  }

  start(): void {
    this.#run.start();
  }

  /** Stops the flushes and writes what is counted. */
  async stop(): Promise<void> {
    await this.#run.stop();
    await this.flush();
  }

  /** Writes the counts so far to the accounts' series (the time of open streams too). */
  async flush(): Promise<void> {
    const now = this.#now();
    for (const stream of this.#streams) this.#countStream(stream, now);
    await this.#markWritten();
    const pending = this.#pending;
    if (pending.size === 0) return;
    this.#pending = new Map();
    const started = performance.now();
    let failures: { entry: SeriesEntry; error: Error }[];
    const entries = [...pending].map(([account, counts]) => ({ account, at: now, counts }));
    try {
      failures = await this.#deps.series.addAll(entries);
    } catch (err) {
      failures = entries.map((entry) => ({
        entry,
        error: err instanceof Error ? err : new Error(String(err)),
      }));
    }
    for (const { entry } of failures)
      for (const [metric, n] of entry.counts) this.count(entry.account, metric, n);
    const failed = failures.length > 0;
    if (failed)
      this.#deps.logger.warn(
        { accounts: failures.length, error: failures[0]?.error.name },
        "usage counts not written; the next flush tries again",
      );
    this.#deps.onFlush?.((performance.now() - started) / 1000, failed);
  }
}
