/** A project's authentication in the compiled model (domain/model/authentication-model.ts): one kind per provider. */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject } from "../../../services/data/src/domain/model/project-model.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";

function compiled(authentication: Record<string, unknown>, libraries: Record<string, unknown> = {}) {
  const parsed = parseProjectDefinition({ ...demoProject(), authentication, libraries });
  if (!parsed.ok) return { problems: parsed.problems.map((p) => `${p.path}: ${p.message}`) };
  const result = compileProject(testIdentity, parsed.definition);
  return result.ok
    ? { model: result.model }
    : { problems: result.problems.map((p) => `${p.path}: ${p.message}`) };
}

describe("authentication model", () => {
  it("carries each provider's own fields", () => {
    expect(compiled({}).model?.authentication.provider).to.equal("builtin");
    const custom = compiled(
      { provider: "custom", library: "auth", createFunction: "create" },
      { auth: { code: "function create() {}" } },
    ).model?.authentication;
    expect(custom).to.deep.include({
      provider: "custom",
      library: { name: "auth", code: "function create() {}" },
      createFunction: "create",
    });
    const oidc = compiled({ provider: "oidc", oidc: { issuer: "https://id.example.com", audience: "shop" } })
      .model?.authentication;
    expect(oidc?.provider).to.equal("oidc");
    if (oidc?.provider !== "oidc") throw new Error("an oidc provider");
    expect(oidc.oidc.issuer).to.equal("https://id.example.com");
  });

  it("a provider without its fields does not compile, each missing one named", () => {
    expect(compiled({ provider: "custom" }).problems).to.deep.equal([
      "$.authentication.library: a custom provider needs 'library'",
      "$.authentication.createFunction: a custom provider needs 'createFunction'",
    ]);
    expect(compiled({ provider: "oidc" }).problems).to.deep.equal([
      "$.authentication.oidc: an oidc provider needs 'oidc' (issuer, audience, …)",
    ]);
  });
});
