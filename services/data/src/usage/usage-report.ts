/**
 * The usage answer of an account (GET /admin/v1/accounts/{a}/usage): its
 * plan and limits, what it uses now (the last storage measurement, its
 * projects), warnings from 80 % of a limit on, and the series of the asked
 * range. Pure: built from what the route read.
 */
import {
  USAGE_DELIVERY_OUTCOMES,
  USAGE_REQUEST_KINDS,
  USAGE_STATUS_CLASSES,
  type UsagePointView,
  type UsageView,
  type UsageWarningView,
} from "../../../../shared/contracts/admin-api.ts";
import type { EffectiveLimits, LimitName } from "../../../../shared/quotas/plans.ts";
import { limitState } from "../../../../shared/quotas/plans.ts";
import { snapshotGauges } from "./storage-sampler.ts";
import { isGauge, type SeriesPoint } from "./usage-buckets.ts";
import type { UsageSnapshot } from "./usage-series.ts";

export interface UsageInput {
  account: string;
  limits: EffectiveLimits;
  snapshot: UsageSnapshot | undefined;
  /** The account's projects: the tables of each one's definition, its users, keys in force and webhooks. */
  projects: { name: string; tables: number; users?: number; apiKeys?: number; webhooks?: number }[];
  from: number;
  to: number;
  stepMs: number;
  points: SeriesPoint[];
  /** The time of the answer: steps that start after it carry no measurement forward. */
  now: number;
}

/** Warnings for every use at or above 80 % of its limit (usage-buckets: `limitState`). */
export function usageWarnings(
  input: Omit<UsageInput, "from" | "to" | "stepMs" | "points" | "now">,
): UsageWarningView[] {
  const { limits } = input.limits;
  const warnings: UsageWarningView[] = [];
  const check = (limit: LimitName, used: number, where: { project?: string; table?: string } = {}) => {
    const value = limits[limit];
    const state = limitState(used, value);
    if (state !== "ok" && value !== null) warnings.push({ limit, state, used, value, ...where });
  };
  if (input.snapshot) check("storedBytes", input.snapshot.storedBytes);
  check("projects", input.projects.length);
  for (const p of input.projects) {
    check("tablesPerProject", p.tables, { project: p.name });
    if (p.users !== undefined) check("usersPerProject", p.users, { project: p.name });
    if (p.apiKeys !== undefined) check("apiKeysPerProject", p.apiKeys, { project: p.name });
    if (p.webhooks !== undefined) check("webhooksPerProject", p.webhooks, { project: p.name });
    for (const [table, counts] of Object.entries(input.snapshot?.projects[p.name] ?? {}))
      check("rowsPerTable", counts.rows, { project: p.name, table });
  }
  return warnings;
}

function pointOf(point: SeriesPoint, projects: string[]): UsagePointView {
  const v = point.values;
  const n = (metric: string) => v[metric] ?? 0;
  const requests = Object.fromEntries(
    USAGE_REQUEST_KINDS.map((kind) => [
      kind,
      Object.fromEntries(USAGE_STATUS_CLASSES.map((c) => [c, n(`req.${kind}.${c}`)])),
    ]),
  ) as UsagePointView["requests"];
  return {
    at: new Date(point.at).toISOString(),
    requests,
    sandboxCpuMs: n("cpu.ms"),
    webhookDeliveries: Object.fromEntries(
      USAGE_DELIVERY_OUTCOMES.map((o) => [o, n(`hook.${o}`)]),
    ) as UsagePointView["webhookDeliveries"],
    liveStreamMinutes: n("live.ms") / 60_000,
    storedBytes: v["g.bytes"] ?? null,
    rows: v["g.rows"] ?? null,
    projects: Object.fromEntries(
      projects.map((p) => [
        p,
        {
          requests: USAGE_REQUEST_KINDS.reduce((sum, kind) => sum + n(`p:${p}:req.${kind}`), 0),
          liveStreamMinutes: n(`p:${p}:live.ms`) / 60_000,
          storedBytes: v[`p:${p}:g.bytes`] ?? null,
          rows: v[`p:${p}:g.rows`] ?? null,
        },
      ]),
    ),
  };
}

/**
 * The points with the storage gauges of each step as of its end: an account is measured again only
 * when it changed (storage-sampler.ts), so a step without a measurement keeps the one before it in
 * the range or, when none is, the last snapshot if it was taken before the step ended; a step that
 * starts after `now` keeps none.
 */
export function gaugesCarried(
  points: SeriesPoint[],
  stepMs: number,
  snapshot: UsageSnapshot | undefined,
  now: number,
): SeriesPoint[] {
  const fromSnapshot = snapshot && Object.fromEntries(snapshotGauges(snapshot));
  let last: Record<string, number> | undefined;
  return points.map((point) => {
    const measured = Object.entries(point.values).filter(([metric]) => isGauge(metric));
    if (measured.length > 0) {
      last = Object.fromEntries(measured);
      return point;
    }
    if (point.at > now) return point;
    const carried = last ?? (snapshot && snapshot.at < point.at + stepMs ? fromSnapshot : undefined);
    return carried ? { at: point.at, values: { ...point.values, ...carried } } : point;
  });
}

export function usageReport(input: UsageInput): UsageView {
  const { snapshot } = input;
  const names = input.projects.map((p) => p.name);
  return {
    account: input.account,
    plan: input.limits.plan,
    limits: input.limits.limits,
    overridden: input.limits.overridden,
    current: {
      measuredAt: snapshot ? new Date(snapshot.at).toISOString() : null,
      storedBytes: snapshot?.storedBytes ?? null,
      rows: snapshot?.rows ?? null,
      projects: input.projects.length,
      byProject: Object.fromEntries(
        input.projects.map((p) => [
          p.name,
          {
            tables: p.tables,
            users: p.users ?? null,
            apiKeys: p.apiKeys ?? null,
            webhooks: p.webhooks ?? null,
            byTable: snapshot?.projects[p.name] ?? {},
          },
        ]),
      ),
    },
    warnings: usageWarnings(input),
    series: {
      from: new Date(input.from).toISOString(),
      to: new Date(input.to).toISOString(),
      step: input.stepMs / 1000,
      points: gaugesCarried(input.points, input.stepMs, snapshot, input.now).map((p) => pointOf(p, names)),
    },
  };
}
