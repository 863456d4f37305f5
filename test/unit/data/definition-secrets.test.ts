import { expect } from "chai";
import {
  maskSecretPair,
  maskSecrets,
  restoreSecrets,
  SECRET_MASK,
} from "../../../services/data/src/domain/definition/definition-secrets.ts";

const withConfig = (config: Record<string, unknown>) => ({ authentication: { provider: "custom", config } });

describe("secret fields of a definition", () => {
  it("are answered masked, whatever their type; the rest is untouched", () => {
    const stored = withConfig({ apiSecret: "s3cret", nested: { token: 1 } });
    expect(maskSecrets(stored)).to.deep.equal(withConfig({ apiSecret: SECRET_MASK, nested: SECRET_MASK }));
    expect(stored.authentication.config.apiSecret, "the stored copy").to.equal("s3cret");
    expect(maskSecrets({ authentication: { provider: "builtin" } })).to.deep.equal({
      authentication: { provider: "builtin" },
    });
  });

  it("sent back masked keep the stored value; a new value replaces it; a mask over nothing is a problem", () => {
    const stored = withConfig({ apiSecret: "s3cret", region: "eu" });
    const sent = withConfig({ apiSecret: SECRET_MASK, region: "us", added: SECRET_MASK });
    const restored = restoreSecrets(sent, stored);
    expect(restored.definition).to.deep.equal(
      withConfig({ apiSecret: "s3cret", region: "us", added: SECRET_MASK }),
    );
    expect(restored.problems.map((p) => p.path)).to.deep.equal(["$.authentication.config.added"]);
    expect(restoreSecrets(sent, undefined).problems).to.have.length(2);
  });

  it("compare masked: a diff sees which changed, never a value", () => {
    const [before, after] = maskSecretPair(
      withConfig({ same: "a", changed: "b", removed: "c" }),
      withConfig({ same: "a", changed: "B", added: "d" }),
    );
    expect(JSON.stringify([before, after])).to.not.match(/"[abcdB]"/);
    expect(before.authentication.config.same).to.equal(after.authentication.config.same);
    expect(before.authentication.config.changed).to.not.equal(after.authentication.config.changed);
    expect(Object.keys(before.authentication.config)).to.deep.equal(["same", "changed", "removed"]);
    expect(Object.keys(after.authentication.config)).to.deep.equal(["same", "changed", "added"]);
  });
});
