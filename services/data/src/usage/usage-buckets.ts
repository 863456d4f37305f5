/**
 * The usage series' time layout (pure logic): an account's usage is kept in
 * buckets of one minute (grouped by hour) and of one hour (grouped by day), in
 * UTC. Counters add up within a bucket; gauges (names starting `g.`) keep the
 * last value measured in it. A query picks the coarsest resolution its step
 * allows and sums (counters) or takes the last (gauges) of the buckets in each
 * step.
 */

export type Resolution = "m" | "h";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A metric whose value is a measurement (the last one counts), not a count (the values add up). */
export function isGauge(metric: string): boolean {
  return metric.startsWith("g.") || metric.includes(":g.");
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/** The hour (`m`) or day (`h`) a time falls in, as its key names it: `2026120420` / `20261204`. */
export function periodOf(resolution: Resolution, at: number): string {
  const d = new Date(at);
  const day = `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
  return resolution === "m" ? `${day}${pad(d.getUTCHours())}` : day;
}

/** The bucket within its period: the minute of the hour, or the hour of the day. */
export function bucketOf(resolution: Resolution, at: number): string {
  const d = new Date(at);
  return pad(resolution === "m" ? d.getUTCMinutes() : d.getUTCHours());
}

/** The start (ms) of a period named by periodOf. */
export function periodStart(resolution: Resolution, period: string): number {
  const y = Number(period.slice(0, 4));
  const mo = Number(period.slice(4, 6)) - 1;
  const d = Number(period.slice(6, 8));
  const h = resolution === "m" ? Number(period.slice(8, 10)) : 0;
  return Date.UTC(y, mo, d, h);
}

export function bucketMs(resolution: Resolution): number {
  return resolution === "m" ? MINUTE : HOUR;
}

function periodMs(resolution: Resolution): number {
  return resolution === "m" ? HOUR : DAY;
}

/** Every period that holds a bucket of [from, to), oldest first. */
export function periodsCovering(resolution: Resolution, from: number, to: number): string[] {
  const length = periodMs(resolution);
  const periods: string[] = [];
  for (let start = Math.floor(from / length) * length; start < to; start += length)
    periods.push(periodOf(resolution, start));
  return periods;
}

/** The resolution a step is read at: hours when the step is whole hours, else minutes. */
export function resolutionFor(stepMs: number): Resolution {
  return stepMs % HOUR === 0 ? "h" : "m";
}

/** One step of a series: its start and each metric's value. */
export interface SeriesPoint {
  at: number;
  values: Record<string, number>;
}

/**
 * The points of [from, to) by `stepMs` from the stored periods (`period` → `bucket|metric` →
 * value): counters summed over each step, gauges the last value measured within it.
 */
export function aggregate(
  resolution: Resolution,
  periods: Map<string, Record<string, string>>,
  from: number,
  to: number,
  stepMs: number,
): SeriesPoint[] {
  const points: SeriesPoint[] = [];
  for (let at = from; at < to; at += stepMs) points.push({ at, values: {} });
  /** Each point with when each of its gauges was measured, so the latest wins. */
  const slots = points.map((point) => ({ point, measuredAt: new Map<string, number>() }));
  const width = bucketMs(resolution);
  for (const [period, fields] of periods) {
    const start = periodStart(resolution, period);
    for (const [field, text] of Object.entries(fields)) {
      const bar = field.indexOf("|");
      if (bar < 0) continue;
      const at = start + Number(field.slice(0, bar)) * width;
      if (at < from || at >= to) continue;
      const slot = slots[Math.floor((at - from) / stepMs)];
      const value = Number(text);
      if (!slot || !Number.isFinite(value)) continue;
      const { point, measuredAt } = slot;
      const metric = field.slice(bar + 1);
      if (isGauge(metric)) {
        if ((measuredAt.get(metric) ?? -1) <= at) {
          measuredAt.set(metric, at);
          point.values[metric] = value;
        }
      } else point.values[metric] = (point.values[metric] ?? 0) + value;
    }
  }
  return points;
}
