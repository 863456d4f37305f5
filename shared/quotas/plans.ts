/**
 * Plans: named sets of limits the platform operator defines (in configuration,
 * `PLANS`, or through the admin API) and assigns to accounts, with at most a
 * few limits overridden on one account. Pure logic: parsing, the effective
 * limits of an account, and how close a use is to its limit.
 *
 * Every limit is a whole number or null (no limit). The built-in plan
 * `unlimited` has every limit null: it is the default plan unless
 * `DEFAULT_PLAN` names another, so a platform without plans behaves as before.
 * Two limits reuse settings that exist: `liveStreams` (null: the
 * configured LIVE_MAX_STREAMS_PER_ACCOUNT) and `sandboxCpuMs` (null:
 * SANDBOX_ACCOUNT_CPU_MS), and `requestsPerWindow` is the account's request
 * rate limit (null: RATE_LIMIT_ACCOUNT) when RATE_LIMITS is on.
 */
import { z } from "zod";
import { PLAN_LIMIT_NAMES, type PlanLimitName } from "../contracts/admin-api.ts";
import { NAME_PATTERN } from "../names.ts";

/** The limits a plan sets, in the order the usage answer and the console list them. */
export const LIMIT_NAMES = PLAN_LIMIT_NAMES;

export type LimitName = PlanLimitName;

/** Every limit of a plan: a number, or null for none. */
export type PlanLimits = Record<LimitName, number | null>;

/** What each limit counts, for messages and docs. */
export const LIMIT_MEANINGS: Record<LimitName, string> = {
  storedBytes: "bytes stored by the account (rows and indexes, as the store measures them)",
  rowsPerTable: "rows in one table",
  projects: "projects of the account",
  tablesPerProject: "tables in one project's definition",
  usersPerProject: "built-in users of one project",
  apiKeysPerProject: "manual API keys of one project",
  webhooksPerProject: "webhook subscriptions of one project",
  liveStreams: "live queries open at once for the account, per data-service process",
  requestsPerWindow: "requests of the account per rate-limit window",
  sandboxCpuMs: "sandbox CPU milliseconds of the account per window, per data-service process",
};

export const UNLIMITED_PLAN = "unlimited";

/** Share of a limit from which the usage answer and the console warn. */
export const WARNING_SHARE = 0.8;

const limitValue = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable();

/** A plan as written: any subset of the limits (absent: none). */
export const planLimitsSchema = z.strictObject(
  Object.fromEntries(LIMIT_NAMES.map((n) => [n, limitValue.optional()])) as Record<
    LimitName,
    z.ZodOptional<typeof limitValue>
  >,
);

export type PlanInput = z.infer<typeof planLimitsSchema>;

/** A plan's name follows the name grammar (docs/names.md). */
export const planNameSchema = z.string().regex(NAME_PATTERN, "a plan's name follows the name grammar");

/** `PLANS`: a JSON object of plans by name. */
export const plansSetting = z
  .string()
  .default("{}")
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "must be a JSON object of plans by name" });
      return z.NEVER;
    }
  })
  .pipe(z.record(planNameSchema, planLimitsSchema))
  .transform((plans) => new Map(Object.entries(plans).map(([name, input]) => [name, fullLimits(input)])));

/** A plan's limits with every absent one null. */
export function fullLimits(input: PlanInput): PlanLimits {
  return Object.fromEntries(LIMIT_NAMES.map((n) => [n, input[n] ?? null])) as PlanLimits;
}

export const NO_LIMITS: PlanLimits = fullLimits({});

/** One account's plan: its name and the limits it overrides. */
export interface PlanAssignment {
  plan: string;
  overrides: Partial<PlanLimits>;
}

/** What applies to an account: its plan's name and the limits after its overrides. */
export interface EffectiveLimits {
  plan: string;
  limits: PlanLimits;
  /** The limits the account's own overrides set. */
  overridden: LimitName[];
}

/** The limits of `assignment` given its plan's limits (an unknown plan: none, so nothing is refused by mistake). */
export function effectiveLimits(
  assignment: PlanAssignment,
  planLimits: PlanLimits | undefined,
): EffectiveLimits {
  const limits = { ...(planLimits ?? NO_LIMITS) };
  const overridden: LimitName[] = [];
  for (const name of LIMIT_NAMES) {
    const value = assignment.overrides[name];
    if (value !== undefined) {
      limits[name] = value;
      overridden.push(name);
    }
  }
  return { plan: assignment.plan, limits, overridden };
}

/** How a use stands against its limit. */
export type LimitState = "ok" | "warning" | "full";

/** `full` from the limit on (nothing more may be added), `warning` from WARNING_SHARE of it. */
export function limitState(used: number, limit: number | null): LimitState {
  if (limit === null) return "ok";
  if (used >= limit) return "full";
  return used >= WARNING_SHARE * limit ? "warning" : "ok";
}
