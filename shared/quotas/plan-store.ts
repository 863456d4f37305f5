/**
 * Where plans and accounts' plans are kept: plans from configuration (`PLANS`,
 * fixed), plans the operator defines through the admin API (Redis, beside the
 * other platform settings), and each account's plan and overrides (Redis,
 * beside its request rate limits). `limitsOf` answers an account's effective
 * limits from a short-lived cache, so the request path reads Redis at most
 * once per account and `cacheMs`; a change applies everywhere within it.
 */
import { perAccountCache, readThrough, type TimedRead } from "../cache/per-account-cache.ts";
import type { RedisClient } from "../redis/clients.ts";
import { accountPlanKey, plansKey } from "../redis/key-layout.ts";
import { readStoredJson } from "../stored-json.ts";
import {
  type EffectiveLimits,
  effectiveLimits,
  fullLimits,
  type LimitName,
  NO_LIMITS,
  type PlanAssignment,
  type PlanInput,
  type PlanLimits,
  storedLimitsSchema,
  UNLIMITED_PLAN,
} from "./plans.ts";

export interface PlanSettings {
  /** Plans from configuration (PLANS), by name. */
  configured: Map<string, PlanLimits>;
  /** The plan of accounts that were given none (DEFAULT_PLAN). */
  defaultPlan: string;
  /** How long an account's effective limits are cached in this process. */
  cacheMs: number;
}

export interface StoredPlan {
  name: string;
  limits: PlanLimits;
  /** Where it is defined: configuration (fixed) or the admin API. */
  source: "builtin" | "configuration" | "api";
}

export class PlanStore {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #settings: PlanSettings;
  /** Each account's limits as last read, the most recently used accounts' within a memory budget. */
  readonly #cache = perAccountCache<TimedRead<EffectiveLimits>>();
  readonly #now: () => number;

  constructor(redis: RedisClient, prefix: string, settings: PlanSettings, now: () => number = Date.now) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#settings = settings;
    this.#now = now;
  }

  get defaultPlan(): string {
    return this.#settings.defaultPlan;
  }

  /** Every plan: the built-in `unlimited`, the configured ones, then those of the admin API. */
  async list(): Promise<StoredPlan[]> {
    const stored = await this.#redis.hgetall(plansKey(this.#prefix));
    const plans: StoredPlan[] = [{ name: UNLIMITED_PLAN, limits: NO_LIMITS, source: "builtin" }];
    for (const [name, limits] of this.#settings.configured)
      if (name !== UNLIMITED_PLAN) plans.push({ name, limits, source: "configuration" });
    for (const [name, text] of Object.entries(stored).sort(([a], [b]) => (a < b ? -1 : 1)))
      if (!this.#fixed(name)) plans.push({ name, limits: storedPlanLimits(text), source: "api" });
    return plans;
  }

  async get(name: string): Promise<StoredPlan | undefined> {
    if (name === UNLIMITED_PLAN) return { name, limits: NO_LIMITS, source: "builtin" };
    const configured = this.#settings.configured.get(name);
    if (configured) return { name, limits: configured, source: "configuration" };
    const text = await this.#redis.hget(plansKey(this.#prefix), name);
    return text === null ? undefined : { name, limits: storedPlanLimits(text), source: "api" };
  }

  /** Whether the plan is fixed (built in or configured): the admin API cannot change it. */
  #fixed(name: string): boolean {
    return name === UNLIMITED_PLAN || this.#settings.configured.has(name);
  }

  isFixed(name: string): boolean {
    return this.#fixed(name);
  }

  /** Defines or replaces an admin-API plan; true when it is new. */
  async put(name: string, input: PlanInput): Promise<boolean> {
    const created = await this.#redis.hset(plansKey(this.#prefix), name, JSON.stringify(fullLimits(input)));
    this.#cache.clear();
    return created === 1;
  }

  async delete(name: string): Promise<boolean> {
    const removed = await this.#redis.hdel(plansKey(this.#prefix), name);
    this.#cache.clear();
    return removed === 1;
  }

  /** The account's plan and overrides (the default plan and none when it was given nothing). */
  async assignment(account: string): Promise<PlanAssignment> {
    const [plan, overrides] = await this.#redis.hmget(
      accountPlanKey(this.#prefix, account),
      "plan",
      "overrides",
    );
    return {
      plan: plan ?? this.#settings.defaultPlan,
      overrides: overrides ? storedOverrides(overrides) : {},
    };
  }

  async assign(account: string, assignment: PlanAssignment): Promise<void> {
    await this.#redis.hset(accountPlanKey(this.#prefix, account), {
      plan: assignment.plan,
      overrides: JSON.stringify(assignment.overrides),
    });
    this.#cache.delete(account);
  }

  /** Forgets the account's plan (the account is deleted: a successor starts on the default plan). */
  async drop(account: string): Promise<void> {
    await this.#redis.del(accountPlanKey(this.#prefix, account));
    this.#cache.delete(account);
  }

  /** The account's effective limits, read again from Redis at most every `cacheMs`. */
  limitsOf(account: string): Promise<EffectiveLimits> {
    const options = { now: this.#now(), maxAgeMs: this.#settings.cacheMs };
    return readThrough(this.#cache, account, options, () => this.#resolve(account));
  }

  async #resolve(account: string): Promise<EffectiveLimits> {
    const assignment = await this.assignment(account);
    return effectiveLimits(assignment, (await this.get(assignment.plan))?.limits);
  }
}

/** An admin-API plan's limits as stored (every limit it does not name: none). */
export function storedPlanLimits(text: string): PlanLimits {
  return fullLimits(readStoredJson(storedLimitsSchema, "plan", text));
}

/** An account's overrides as stored: only the limits they name. */
export function storedOverrides(text: string): Partial<PlanLimits> {
  return readStoredJson(storedLimitsSchema, "plan overrides", text);
}

/** The account's plan's requests per window, as the request rate limiter asks for it (null: none). */
export function planRequestLimit(plans: PlanStore): (account: string) => Promise<number | null> {
  return async (account) => (await plans.limitsOf(account)).limits.requestsPerWindow;
}

/** The overrides of a body: each limit given (a number or null = no limit for this account). */
export type Overrides = Partial<Record<LimitName, number | null>>;
