/**
 * Plans and usage on the admin API (docs/admin-api.md#plans-and-usage): the
 * operator's plans, each account's plan and overrides, and the usage answer
 * an account's administrators and the operator read. Measuring an account's
 * storage at once serves an administrator who just deleted rows; recounting
 * its row counts is the operator's repair after a crash on the transaction path.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { z } from "zod";
import { noteAudit } from "../../../../../shared/admin-access/audit.ts";
import { callerOf } from "../../../../../shared/admin-access/gate.ts";
import type { AccountPlanView, PlanView } from "../../../../../shared/contracts/admin-api.ts";
import { errors } from "../../../../../shared/errors.ts";
import { readJsonBody } from "../../../../../shared/http/json-body.ts";
import { parseBody } from "../../../../../shared/http/parse-body.ts";
import { effectiveLimits, planLimitsSchema, planNameSchema } from "../../../../../shared/quotas/plans.ts";
import { parseQueryString, type QueryParams, single } from "../../domain/read/query-params.ts";
import { bucketMs, resolutionFor } from "../../usage/usage-buckets.ts";
import { usageReport } from "../../usage/usage-report.ts";
import { type AdminRouteDeps, requireAccount } from "./deps.ts";
import { nameParam } from "./params.ts";

/** The most points one usage answer holds. */
export const MAX_USAGE_POINTS = 1500;
const DAY_MS = 86_400_000;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS };

const assignmentBody = z.strictObject({
  plan: planNameSchema,
  /** Limits of this account alone (a number, or null: no limit); absent: none overridden. */
  overrides: planLimitsSchema.optional(),
});

function timeParam(params: QueryParams, name: string, fallback: number): number {
  const value = single(params, name);
  if (value === undefined || value === "") return fallback;
  const at = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(at))
    throw errors.malformed(`Parameter '${name}' must be an ISO 8601 time (2026-03-01T00:00:00Z)`);
  return at;
}

/** `step`: seconds, or a number with s, m, h or d; a whole number of minutes. */
function stepParam(params: QueryParams): number {
  const value = single(params, "step");
  if (value === undefined || value === "") return 3_600_000;
  const m = /^(\d{1,7})([smhd]?)$/.exec(value);
  const unit = m ? UNIT_MS[m[2] || "s"] : undefined;
  const ms = m && unit !== undefined ? Number(m[1]) * unit : Number.NaN;
  if (!(ms >= 60_000) || ms % 60_000 !== 0)
    throw errors.malformed("Parameter 'step' must be a whole number of minutes, at least 60 (seconds) or 1m");
  return ms;
}

/** The range and step of a usage query: `from` is moved back to the start of its bucket. */
export function usageRange(query: string, now: number): { from: number; to: number; stepMs: number } {
  const params = parseQueryString(query);
  const stepMs = stepParam(params);
  const to = timeParam(params, "to", now);
  const width = bucketMs(resolutionFor(stepMs));
  const from = Math.floor(timeParam(params, "from", to - DAY_MS) / width) * width;
  if (from >= to) throw errors.malformed("Parameter 'from' must be before 'to'");
  if (Math.ceil((to - from) / stepMs) > MAX_USAGE_POINTS)
    throw errors.malformed(`A usage answer holds at most ${MAX_USAGE_POINTS} points: choose a larger step`);
  return { from, to, stepMs };
}

/** The project's webhook subscriptions (undefined when the change feed is off). */
async function webhookCount(deps: AdminRouteDeps, account: string, project: string) {
  const { webhooks } = deps;
  if (!webhooks) return undefined;
  const model = await deps.projects.get(account, project);
  return model ? (await webhooks.store.list(model.storage)).length : undefined;
}

function requireOperator(ctx: Context, what: string): void {
  if (callerOf(ctx).kind !== "operator") throw errors.forbidden(`Only the platform operator ${what}`);
}

export function addUsageRoutes(router: Router, deps: AdminRouteDeps): void {
  const usage = deps.usage;
  if (!usage) return;
  const { plans } = usage;

  const planName = (ctx: Context) => {
    const parsed = planNameSchema.safeParse(ctx.params.plan ?? "");
    if (!parsed.success)
      throw errors.malformed(`'${ctx.params.plan}' is not a valid plan name (docs/names.md)`);
    return parsed.data;
  };

  router.get("/plans", async (ctx) => {
    ctx.body = (await plans.list()) satisfies PlanView[];
  });

  router.get("/plans/:plan", async (ctx) => {
    const plan = await plans.get(planName(ctx));
    if (!plan) throw errors.notFound(`No plan '${ctx.params.plan}'`);
    ctx.body = plan satisfies PlanView;
  });

  router.put("/plans/:plan", async (ctx) => {
    const name = planName(ctx);
    const limits = parseBody(planLimitsSchema, await readJsonBody(ctx, deps.maxBodyBytes));
    if (plans.isFixed(name))
      throw errors.malformed(
        `Plan '${name}' is defined by the configuration (PLANS) and cannot be changed here`,
      );
    const created = await plans.put(name, limits);
    noteAudit(ctx, { summary: `plan '${name}' ${created ? "created" : "updated"}` });
    ctx.status = created ? 201 : 200;
    ctx.body = (await plans.get(name)) satisfies PlanView | undefined;
  });

  router.delete("/plans/:plan", async (ctx) => {
    const name = planName(ctx);
    if (plans.isFixed(name))
      throw errors.malformed(
        `Plan '${name}' is defined by the configuration (PLANS) and cannot be deleted here`,
      );
    if (!(await plans.delete(name))) throw errors.notFound(`No plan '${name}'`);
    noteAudit(ctx, { summary: `plan '${name}' deleted` });
    ctx.body = { name, deleted: true };
  });

  const planView = async (account: string): Promise<AccountPlanView> => {
    const assignment = await plans.assignment(account);
    const { limits } = effectiveLimits(assignment, (await plans.get(assignment.plan))?.limits);
    return { plan: assignment.plan, overrides: assignment.overrides, limits };
  };

  router.get("/accounts/:account/plan", async (ctx) => {
    const account = nameParam(ctx, "account");
    await requireAccount(deps, account, ctx);
    ctx.body = await planView(account);
  });

  router.put("/accounts/:account/plan", async (ctx) => {
    const account = nameParam(ctx, "account");
    requireOperator(ctx, "assigns plans");
    const body = parseBody(assignmentBody, await readJsonBody(ctx, deps.maxBodyBytes));
    await requireAccount(deps, account, ctx);
    if (!(await plans.get(body.plan))) throw errors.malformed(`No plan '${body.plan}'`);
    const overrides = body.overrides ?? {};
    await plans.assign(account, { plan: body.plan, overrides });
    const overridden = Object.keys(overrides);
    noteAudit(ctx, {
      summary: `plan '${body.plan}'${overridden.length ? ` with overrides of ${overridden.join(", ")}` : ""}`,
    });
    ctx.body = await planView(account);
  });

  router.get("/accounts/:account/usage", async (ctx) => {
    const account = nameParam(ctx, "account");
    await requireAccount(deps, account, ctx);
    const { from, to, stepMs } = usageRange(ctx.querystring, Date.now());
    const [limits, snapshot, stored, points] = await Promise.all([
      plans.limitsOf(account),
      usage.series.snapshot(account),
      deps.meta.listProjects(account),
      usage.series.read(account, from, to, stepMs),
    ]);
    const now = Date.now();
    const projects = await Promise.all(
      stored.map(async (p) => ({
        name: p.name,
        tables: Object.keys((p.definition as { tables?: object }).tables ?? {}).length,
        users: (await deps.users.list({ account, name: p.name, uid: p.uid })).length,
        apiKeys: await deps.keyStore.activeCount(account, p.name, now),
        webhooks: await webhookCount(deps, account, p.name),
      })),
    );
    ctx.body = usageReport({ account, limits, snapshot, projects, from, to, stepMs, points, now });
  });

  // Measures the account's storage now (after a clean-up, so as not to wait for the next round).
  router.post("/accounts/:account/usage/measure", async (ctx) => {
    const account = nameParam(ctx, "account");
    await requireAccount(deps, account, ctx);
    const snapshot = await usage.measure(account);
    noteAudit(ctx, { summary: "storage measured" });
    ctx.body = {
      measuredAt: snapshot ? new Date(snapshot.at).toISOString() : null,
      storedBytes: snapshot?.storedBytes ?? null,
      rows: snapshot?.rows ?? null,
    };
  });

  // The operator's repair: row counts made again from the store (writes in flight may be missed).
  router.post("/accounts/:account/usage/recount", async (ctx) => {
    const account = nameParam(ctx, "account");
    requireOperator(ctx, "recounts an account's rows");
    await requireAccount(deps, account, ctx);
    const counts = await usage.recount(account);
    noteAudit(ctx, { summary: `row counts recounted (${counts.size} tables)` });
    ctx.body = { tables: counts.size, rows: [...counts.values()].reduce((a, b) => a + b, 0) };
  });
}
