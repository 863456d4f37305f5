/**
 * The login providers a process keeps (providers/*-provider-factory.ts) are bounded by memory
 * (PROVIDER_CACHE_MIB), like the other per-account caches (shared/cache/per-account-cache.ts): a
 * project's provider is kept while it fits, the least recently used go first past the budget, and
 * a provider with larger settings takes more of it.
 */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject, type ProjectModel } from "../../../services/data/src/domain/model/project-model.ts";
import { createCustomProviderFactory } from "../../../services/data/src/providers/custom-provider-factory.ts";
import { createOidcProviderFactory } from "../../../services/data/src/providers/oidc-provider-factory.ts";
import type { SandboxPool } from "../../../services/data/src/sandbox/index.ts";
import { perAccountCache } from "../../../shared/cache/per-account-cache.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";

function model(
  authentication: Record<string, unknown>,
  libraries: Record<string, unknown> = {},
): ProjectModel {
  const parsed = parseProjectDefinition({ ...demoProject(), authentication, libraries });
  if (!parsed.ok) throw new Error("the definition parses");
  const result = compileProject(testIdentity, parsed.definition);
  if (!result.ok) throw new Error("the definition compiles");
  return result.model;
}

const silent = { info() {}, warn() {}, error() {} } as never;

describe("login provider caches", () => {
  it("oidc providers are kept within their memory budget, least recently used first out", () => {
    const oidc = model({ provider: "oidc", oidc: { issuer: "https://id.example.com", audience: "shop" } });
    if (oidc.authentication.provider !== "oidc") throw new Error("an oidc project");
    const authentication = oidc.authentication;
    const of = (account: string): ProjectModel => ({ ...oidc, account });
    // About four providers' worth (16 KiB each and their entries).
    const small = createOidcProviderFactory({ allowLoopback: false, logger: silent, budgetBytes: 70 * 1024 });
    const first = small(of("a0"), authentication);
    expect(small(of("a0"), authentication), "kept").to.equal(first);
    for (let i = 1; i < 4; i++) small(of(`a${i}`), authentication);
    expect(small(of("a0"), authentication), "within the budget").to.equal(first);
    for (let i = 4; i < 12; i++) small(of(`a${i}`), authentication);
    expect(small(of("a0"), authentication), "past the budget: made again").to.not.equal(first);
    const large = createOidcProviderFactory({
      allowLoopback: false,
      logger: silent,
      budgetBytes: 1024 * 1024,
    });
    const kept = large(of("a0"), authentication);
    for (let i = 1; i < 12; i++) large(of(`a${i}`), authentication);
    expect(large(of("a0"), authentication), "a budget for all keeps them all").to.equal(kept);
  });

  it("a custom provider with large settings takes more of the budget", () => {
    // The factory's caching alone: the programs it asks the sandbox for are only counted here.
    let programs = 0;
    const pool = {
      allowLoopbackFetch: false,
      program: () => {
        programs++;
        return {};
      },
    } as unknown as SandboxPool;
    const withConfig = (config: Record<string, unknown>) =>
      model(
        { provider: "custom", library: "auth", createFunction: "create", config },
        { auth: { code: "function create() { return {}; }" } },
      );
    const small = withConfig({ realm: "shop" });
    const large = withConfig({ realm: "x".repeat(20_000) });
    if (small.authentication.provider !== "custom" || large.authentication.provider !== "custom")
      throw new Error("custom projects");
    const factory = createCustomProviderFactory({ pool, logger: silent, budgetBytes: 64 * 1024 });
    for (let i = 0; i < 10; i++) factory.providerFor({ ...small, account: `a${i}` }, small.authentication);
    expect(programs).to.equal(10);
    for (let i = 0; i < 10; i++) factory.providerFor({ ...small, account: `a${i}` }, small.authentication);
    expect(programs, "ten small ones kept").to.equal(10);
    factory.providerFor({ ...large, account: "big" }, large.authentication);
    for (let i = 0; i < 10; i++) factory.providerFor({ ...small, account: `a${i}` }, small.authentication);
    expect(programs, "the large one's settings pushed small ones out").to.be.above(11);
  });

  it("a value's own estimate counts: larger values leave room for fewer", () => {
    const cache = perAccountCache<{ chars: number }>(10_000, (v) => v.chars * 2);
    for (let i = 0; i < 10; i++) cache.set(`small${i}`, { chars: 100 });
    expect(cache.size, "ten small ones fit").to.equal(10);
    cache.set("big", { chars: 3000 });
    expect(cache.has("big")).to.equal(true);
    expect(cache.has("small0"), "the least recently used made room").to.equal(false);
    expect(cache.calculatedSize).to.be.at.most(10_000);
  });
});
