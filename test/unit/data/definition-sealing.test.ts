/** Provider secrets of stored definitions, sealed at rest (store/definition-sealing.ts). */
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { mapSecrets } from "../../../services/data/src/domain/definition/definition-secrets.ts";
import { DefinitionSealing } from "../../../services/data/src/store/definition-sealing.ts";
import { SecretBox } from "../../../services/data/src/store/secret-box.ts";
import type { Logger } from "../../../shared/logger.ts";

const warnings: string[] = [];
const logger = { warn: (_: unknown, message: string) => warnings.push(message) } as unknown as Logger;
const sealing = (...keys: Buffer[]) => new DefinitionSealing(new SecretBox(keys), logger, mapSecrets);

const definition = {
  tables: { config: { columns: { config: { type: "string" } } } },
  authentication: {
    provider: "custom",
    library: "word",
    config: { secretWord: "swordfish", limits: { tries: 3 }, roles: ["Full access"], off: null },
  },
};

describe("definition sealing (provider secrets at rest)", () => {
  it("seals every provider config value, of any JSON type, and nothing else; opens them as they were", () => {
    const key = randomBytes(32);
    const stored = sealing(key).stored(definition);
    expect(stored).to.not.include("swordfish").and.not.include("Full access");
    const parsed = JSON.parse(stored);
    expect(parsed.tables).to.deep.equal(definition.tables);
    expect(parsed.authentication.provider).to.equal("custom");
    for (const value of Object.values(parsed.authentication.config)) expect(value).to.match(/^tsealed1:/);
    expect(sealing(key).definition(stored)).to.deep.equal(definition);
    // An older key listed after the current one still opens.
    expect(sealing(randomBytes(32), key).definition(stored)).to.deep.equal(definition);
  });

  it("keeps a value sealed already as it is, and leaves sealed one that does not open here (with a warning)", () => {
    const [old, other] = [randomBytes(32), randomBytes(32)];
    const stored = sealing(old).stored(definition);
    const opened = sealing(other).definition(stored) as typeof definition;
    expect(opened.authentication.config.secretWord).to.match(/^tsealed1:/);
    expect(warnings.some((w) => w.includes("does not open"))).to.equal(true);
    // Stored back (a definition sent with its masks keeps the stored value): still the old seal.
    expect(JSON.parse(sealing(other).stored(opened)).authentication.config.secretWord).to.equal(
      JSON.parse(stored).authentication.config.secretWord,
    );
    expect(sealing(old).definition(sealing(other).stored(opened))).to.deep.equal(definition);
  });

  it("seals again under the current key what is stored as it was or under an older one", () => {
    const [old, current] = [randomBytes(32), randomBytes(32)];
    const both = sealing(current, old);
    const plain = JSON.stringify(definition);
    const fromPlain = both.resealed(plain)!;
    const fromOld = both.resealed(sealing(old).stored(definition))!;
    for (const text of [fromPlain, fromOld]) {
      expect(text).to.not.include("swordfish");
      expect(sealing(current).definition(text)).to.deep.equal(definition);
    }
    expect(both.resealed(fromOld), "nothing left to do").to.equal(undefined);
    expect(sealing().resealed(plain), "no key").to.equal(undefined);
  });

  it("without a key stores definitions as they are", () => {
    expect(sealing().stored(definition)).to.equal(JSON.stringify(definition));
    expect(sealing().definition(JSON.stringify(definition))).to.deep.equal(definition);
  });
});
