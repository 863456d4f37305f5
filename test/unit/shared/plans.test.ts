/** Plans (shared/quotas/plans.ts): PLANS parsing, an account's effective limits, and how a use stands. */
import { expect } from "chai";
import { ConfigError, dataConfigSchema, parseConfig } from "../../../shared/config/config.ts";
import { storedOverrides, storedPlanLimits } from "../../../shared/quotas/plan-store.ts";
import {
  effectiveLimits,
  fullLimits,
  LIMIT_NAMES,
  limitState,
  NO_LIMITS,
  plansSetting,
  UNLIMITED_PLAN,
} from "../../../shared/quotas/plans.ts";

const BASE_ENV = { ADMIN_TOKEN: "a", SERVICE_TOKEN: "s", MONGO_URL: "mongodb://127.0.0.1:1" };

describe("plans", () => {
  it("PLANS parses into full limits (absent: none); bad JSON, unknown limits and bad values are refused", () => {
    const plans = plansSetting.parse('{"free": {"rowsPerTable": 10, "storedBytes": null}}');
    expect(plans.get("free")).to.deep.equal({ ...NO_LIMITS, rowsPerTable: 10 });
    for (const bad of [
      "nope",
      '{"free": {"rows": 1}}',
      '{"free": {"projects": -1}}',
      '{"..": {}}',
      '{"f": {"projects": 1.5}}',
    ])
      expect(plansSetting.safeParse(bad).success, bad).to.equal(false);
  });

  it("without plans every account is unlimited (the default keeps make run as it was)", () => {
    const config = parseConfig(dataConfigSchema, BASE_ENV);
    expect(config.DEFAULT_PLAN).to.equal(UNLIMITED_PLAN);
    expect(config.PLANS.size).to.equal(0);
    expect(effectiveLimits({ plan: UNLIMITED_PLAN, overrides: {} }, undefined).limits).to.deep.equal(
      NO_LIMITS,
    );
  });

  it("DEFAULT_PLAN must name a plan of PLANS", () => {
    expect(() => parseConfig(dataConfigSchema, { ...BASE_ENV, DEFAULT_PLAN: "gold" })).to.throw(
      ConfigError,
      /DEFAULT_PLAN/,
    );
    const ok = parseConfig(dataConfigSchema, { ...BASE_ENV, DEFAULT_PLAN: "gold", PLANS: '{"gold": {}}' });
    expect(ok.DEFAULT_PLAN).to.equal("gold");
  });

  it("an override replaces one limit of the plan; null lifts it for that account", () => {
    const plan = fullLimits({ rowsPerTable: 10, projects: 2 });
    const limits = effectiveLimits({ plan: "free", overrides: { rowsPerTable: 50, projects: null } }, plan);
    expect(limits).to.deep.equal({
      plan: "free",
      limits: { ...plan, rowsPerTable: 50, projects: null },
      overridden: ["rowsPerTable", "projects"],
    });
    expect(Object.keys(limits.limits)).to.deep.equal([...LIMIT_NAMES]);
  });

  it("a use is ok below 80 %, a warning from 80 %, full at the limit", () => {
    expect(limitState(79, 100)).to.equal("ok");
    expect(limitState(80, 100)).to.equal("warning");
    expect(limitState(99, 100)).to.equal("warning");
    expect(limitState(100, 100)).to.equal("full");
    expect(limitState(5, 0)).to.equal("full");
    expect(limitState(1e12, null)).to.equal("ok");
  });

  it("stored overrides and plans are read through their schema; a record from before a limit existed reads", () => {
    // As stored before apiKeysPerProject and webhooksPerProject were limits.
    const older = JSON.stringify({ projects: 3, rowsPerTable: null });
    expect(storedOverrides(older)).to.deep.equal({ projects: 3, rowsPerTable: null });
    expect(storedPlanLimits(older)).to.deep.equal({ ...NO_LIMITS, projects: 3 });
    // A limit this release does not know (a later release's) is left out.
    expect(storedOverrides(JSON.stringify({ projects: 1, laterLimit: 5 }))).to.deep.equal({ projects: 1 });
    expect(() => storedOverrides(JSON.stringify({ projects: "many" }))).to.throw(
      /a stored plan overrides does not read: projects/,
    );
    expect(() => storedPlanLimits("{")).to.throw(/a stored plan is not JSON/);
  });
});
