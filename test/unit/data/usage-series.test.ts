/**
 * The usage series' time layout and the usage answer (pure logic): buckets by
 * minute and hour in UTC, counters summed and gauges the last value of a step,
 * the range a query may ask for, and the warnings from 80 % of a limit.
 */
import { expect } from "chai";
import fc from "fast-check";
import { usageRange } from "../../../services/data/src/http/admin/usage-routes.ts";
import { snapshotGauges, snapshotOf } from "../../../services/data/src/usage/storage-sampler.ts";
import {
  aggregate,
  bucketOf,
  periodOf,
  periodStart,
  periodsCovering,
  resolutionFor,
} from "../../../services/data/src/usage/usage-buckets.ts";
import { gaugesCarried, usageWarnings } from "../../../services/data/src/usage/usage-report.ts";
import { effectiveLimits, fullLimits } from "../../../shared/quotas/plans.ts";

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 2, 1, 0, 0);

/** What UsageSeries.add stores for events at `times` (one count each) and a gauge measured then. */
function stored(resolution: "m" | "h", events: { at: number; metric: string; value: number }[]) {
  const periods = new Map<string, Record<string, string>>();
  for (const { at, metric, value } of events) {
    const period = periodOf(resolution, at);
    const fields = periods.get(period) ?? {};
    const field = `${bucketOf(resolution, at)}|${metric}`;
    const gauge = metric.startsWith("g.");
    fields[field] = String(gauge ? value : Number(fields[field] ?? 0) + value);
    periods.set(period, fields);
  }
  return periods;
}

describe("usage series", () => {
  it("names periods and buckets in UTC and finds a period's start again", () => {
    const at = Date.UTC(2026, 11, 4, 21, 7, 30);
    expect(periodOf("m", at)).to.equal("2026120421");
    expect(bucketOf("m", at)).to.equal("07");
    expect(periodOf("h", at)).to.equal("20261204");
    expect(bucketOf("h", at)).to.equal("21");
    expect(periodStart("m", "2026120421")).to.equal(Date.UTC(2026, 11, 4, 21));
    expect(periodStart("h", "20261204")).to.equal(Date.UTC(2026, 11, 4));
    expect(periodsCovering("h", T0, T0 + 30 * 24 * HOUR)).to.have.length(30);
    expect(resolutionFor(HOUR)).to.equal("h");
    expect(resolutionFor(5 * 60_000)).to.equal("m");
  });

  it("sums counters over each step and keeps a gauge's last value, for any events (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            minute: fc.integer({ min: 0, max: 3 * 24 * 60 - 1 }),
            n: fc.integer({ min: 1, max: 9 }),
          }),
          {
            maxLength: 60,
          },
        ),
        fc.constantFrom(1, 2, 6, 24),
        (events, stepHours) => {
          const stepMs = stepHours * HOUR;
          const to = T0 + 3 * 24 * HOUR;
          const list = events.map((e) => ({
            at: T0 + e.minute * 60_000,
            metric: "req.read.2xx",
            value: e.n,
          }));
          const gauges = events.map((e) => ({
            at: T0 + e.minute * 60_000,
            metric: "g.bytes",
            value: e.minute,
          }));
          const points = aggregate("h", stored("h", [...list, ...gauges]), T0, to, stepMs);
          expect(points).to.have.length(Math.ceil((to - T0) / stepMs));
          points.forEach((p, i) => {
            const inStep = events.filter((e) => Math.floor((e.minute * 60_000) / stepMs) === i);
            expect(p.values["req.read.2xx"] ?? 0).to.equal(inStep.reduce((s, e) => s + e.n, 0));
            // The hour bucket keeps its last measurement; the step, its latest bucket's.
            const byHour = new Map<number, number>();
            for (const e of events) byHour.set(Math.floor(e.minute / 60), e.minute);
            const hours = [...byHour.keys()].filter((h) => Math.floor((h * HOUR) / stepMs) === i);
            const latest = hours.length ? byHour.get(Math.max(...hours)) : undefined;
            expect(p.values["g.bytes"]).to.equal(latest);
          });
        },
      ),
    );
  });

  it("a query's range: defaults, step units, at most 1500 points, from before to", () => {
    const now = Date.UTC(2026, 2, 10, 12, 34, 56);
    const range = usageRange("", now);
    expect(range).to.deep.equal({ from: Date.UTC(2026, 2, 9, 12), to: now, stepMs: HOUR });
    expect(usageRange("step=5m", now).stepMs).to.equal(300_000);
    expect(usageRange("step=86400", now).stepMs).to.equal(24 * HOUR);
    for (const bad of [
      "step=30s",
      "step=90",
      "step=1w",
      "from=yesterday",
      "from=2026-03-11T00:00:00Z",
      "step=1m&from=2026-01-01T00:00:00Z",
    ])
      expect(() => usageRange(bad, now), bad).to.throw(/Parameter|at most/);
  });

  it("measurements map collections to projects by prefix; gauges per account and project", () => {
    const stats = {
      bytes: 5000,
      collections: new Map([
        ["demo~a1.customer", { rows: 3, bytes: 100 }],
        ["demo~a1.order", { rows: 4, bytes: 200 }],
        ["other~b2.thing", { rows: 1, bytes: 50 }],
        ["feed_outbox", { rows: 9, bytes: 900 }],
      ]),
    };
    const snapshot = snapshotOf(1, stats, [
      { name: "demo", collectionPrefix: "demo~a1." },
      { name: "other", collectionPrefix: "other~b2." },
    ]);
    expect(snapshot).to.deep.equal({
      at: 1,
      storedBytes: 5000,
      rows: 8,
      projects: {
        demo: { customer: { rows: 3, bytes: 100 }, order: { rows: 4, bytes: 200 } },
        other: { thing: { rows: 1, bytes: 50 } },
      },
    });
    expect(Object.fromEntries(snapshotGauges(snapshot))).to.deep.equal({
      "g.bytes": 5000,
      "g.rows": 8,
      "p:demo:g.rows": 7,
      "p:demo:g.bytes": 300,
      "p:other:g.rows": 1,
      "p:other:g.bytes": 50,
    });
  });

  it("a step without a measurement keeps the one before it, or the snapshot taken before it ended; never past now", () => {
    const step = HOUR;
    const snapshot = { at: T0 + 30 * 60_000, storedBytes: 700, rows: 7, projects: { demo: {} } };
    const point = (h: number, values: Record<string, number>) => ({ at: T0 + h * HOUR, values });
    const points = [
      point(-1, { "req.read.2xx": 1 }),
      point(0, {}),
      point(1, { "req.read.2xx": 2 }),
      point(2, { "g.bytes": 900, "g.rows": 9 }),
      point(3, {}),
      point(4, {}),
    ];
    const carried = gaugesCarried(points, step, snapshot, T0 + 3 * HOUR + 1);
    expect(carried.map((p) => p.values["g.bytes"] ?? null)).to.deep.equal([null, 700, 700, 900, 900, null]);
    expect(carried[1]!.values["p:demo:g.bytes"], "the projects' gauges too").to.equal(0);
    expect(carried[2]!.values["req.read.2xx"], "counters stay as they are").to.equal(2);
    expect(
      gaugesCarried(points, step, undefined, T0 + 10 * HOUR).map((p) => p.values["g.rows"] ?? null),
      "never measured before the range: nothing to carry until a measurement",
    ).to.deep.equal([null, null, null, 9, 9, 9]);
  });

  it("warns from 80 % of a limit, per table and project, and says full at it", () => {
    const limits = effectiveLimits(
      { plan: "p", overrides: {} },
      fullLimits({ rowsPerTable: 10, storedBytes: 1000, projects: 2, tablesPerProject: 5 }),
    );
    const warnings = usageWarnings({
      account: "a",
      limits,
      snapshot: {
        at: 0,
        storedBytes: 1000,
        rows: 9,
        projects: { demo: { t: { rows: 8, bytes: 1 }, u: { rows: 1, bytes: 1 } } },
      },
      projects: [{ name: "demo", tables: 2 }],
    });
    expect(warnings).to.deep.equal([
      { limit: "storedBytes", state: "full", used: 1000, value: 1000 },
      { limit: "rowsPerTable", state: "warning", used: 8, value: 10, project: "demo", table: "t" },
    ]);
  });
});
