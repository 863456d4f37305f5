/**
 * The `oidc` provider's pure parts: its settings in a project definition
 * (issuer URL, asymmetric algorithms only, only with `provider: "oidc"`), how
 * long a fetched document is kept from its Cache-Control, and how claims
 * become roles.
 */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { checkFilterText } from "../../../services/data/src/domain/model/filter-check.ts";
import { compileProject } from "../../../services/data/src/domain/model/project-model.ts";
import { cacheLifetimeMs } from "../../../services/data/src/providers/oidc-keys.ts";
import { claimAt, rolesOf } from "../../../services/data/src/providers/oidc-provider.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";

function problemPaths(authentication: Record<string, unknown>): string[] {
  const parsed = parseProjectDefinition(demoProject({ authentication }));
  if (!parsed.ok) return parsed.problems.map((p) => p.path);
  const compiled = compileProject(testIdentity, parsed.definition, checkFilterText);
  return compiled.ok ? [] : compiled.problems.map((p) => p.path);
}

const oidc = (settings: Record<string, unknown> = {}) => ({
  provider: "oidc",
  oidc: { issuer: "https://login.example.com/realms/acme", audience: "tessera", ...settings },
});

describe("oidc provider settings", () => {
  it("accept an https issuer, or http on a loopback host", () => {
    expect(problemPaths(oidc())).to.deep.equal([]);
    expect(problemPaths(oidc({ issuer: "http://127.0.0.1:8999" }))).to.deep.equal([]);
    expect(problemPaths(oidc({ issuer: "http://localhost:8999/realm" }))).to.deep.equal([]);
  });

  it("refuse an issuer over plain http elsewhere, or with credentials", () => {
    for (const issuer of ["http://login.example.com", "https://u:p@login.example.com", "ftp://x", "login"]) {
      expect(problemPaths(oidc({ issuer })), issuer).to.deep.equal(["$.authentication.oidc.issuer"]);
    }
  });

  it("refuse HMAC and none among the algorithms", () => {
    for (const alg of ["HS256", "none"]) {
      expect(problemPaths(oidc({ algorithms: ["RS256", alg] })), alg).to.deep.equal([
        "$.authentication.oidc.algorithms[1]",
      ]);
    }
  });

  it("are needed by provider oidc, and refused with another provider", () => {
    expect(problemPaths({ provider: "oidc" })).to.deep.equal(["$.authentication.oidc"]);
    expect(problemPaths({ ...oidc(), provider: "builtin" })).to.deep.equal(["$.authentication.oidc"]);
  });
});

describe("oidc key set caching", () => {
  it("keeps a document for its max-age, at most a day; not at all for no-store or no-cache", () => {
    expect(cacheLifetimeMs("public, max-age=600")).to.equal(600_000);
    expect(cacheLifetimeMs("max-age=0")).to.equal(0);
    expect(cacheLifetimeMs("max-age=99999999")).to.equal(86_400_000);
    expect(cacheLifetimeMs("no-store")).to.equal(0);
    expect(cacheLifetimeMs("max-age=600, no-cache")).to.equal(0);
  });

  it("keeps a document without a Cache-Control (or without max-age) five minutes", () => {
    expect(cacheLifetimeMs(undefined)).to.equal(300_000);
    expect(cacheLifetimeMs("public")).to.equal(300_000);
  });
});

describe("oidc claims", () => {
  const settings = {
    issuer: "https://i",
    audience: "a",
    algorithms: ["RS256" as const],
    userIdentifierClaim: "sub",
    clockSkewSeconds: 60,
  };
  const projectRoles = new Set(["Full access", "Region reader"]);

  it("are read by dotted paths, own properties only", () => {
    const claims = { realm_access: { roles: ["x"] }, sub: "s" };
    expect(claimAt(claims, "realm_access.roles")).to.deep.equal(["x"]);
    expect(claimAt(claims, "realm_access.toString")).to.equal(undefined);
    expect(claimAt(claims, "sub.length")).to.equal(undefined);
  });

  it("name roles through the role map, or as they are; roles the project lacks are dropped", () => {
    const claims = { groups: ["sales", "admins", "sales", 7], role: "Full access" };
    const mapped = {
      ...settings,
      rolesClaim: "groups",
      roleMap: { sales: ["Region reader"], admins: ["Full access", "Ghost"] },
    };
    expect(rolesOf(claims, mapped, projectRoles)).to.deep.equal(["Region reader", "Full access"]);
    expect(rolesOf(claims, { ...settings, rolesClaim: "role" }, projectRoles)).to.deep.equal(["Full access"]);
    expect(rolesOf(claims, { ...settings, rolesClaim: "groups" }, projectRoles)).to.deep.equal([]);
    expect(rolesOf(claims, settings, projectRoles)).to.deep.equal([]);
  });
});
