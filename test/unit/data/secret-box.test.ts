import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { SecretBox, SecretBoxError } from "../../../services/data/src/store/secret-box.ts";
import { ConfigError, dataConfigSchema, parseConfig } from "../../../shared/config/config.ts";

const key = () => randomBytes(32);

describe("secret box (secrets at rest)", () => {
  const plain = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

  it("seals with the first key, each time anew, and opens what it sealed", () => {
    const box = new SecretBox([key()]);
    const [a, b] = [box.seal(plain), box.seal(plain)];
    expect(a).to.match(/^tsealed1:[0-9a-f]{16}:[A-Za-z0-9_-]+$/);
    expect(a).to.not.equal(b);
    expect(a).to.not.include(plain.slice(6));
    expect([box.open(a), box.open(b)]).to.deep.equal([plain, plain]);
  });

  it("opens values sealed under any of its keys; refuses other keys and altered values", () => {
    const [oldKey, newKey] = [key(), key()];
    const sealedOld = new SecretBox([oldKey]).seal(plain);
    const both = new SecretBox([newKey, oldKey]);
    expect(both.open(sealedOld)).to.equal(plain);
    expect(() => new SecretBox([newKey]).open(sealedOld)).to.throw(SecretBoxError, /not configured here/);
    const parts = sealedOld.split(":");
    const bytes = Buffer.from(parts[2]!, "base64url");
    bytes[bytes.length - 1]! ^= 1;
    const altered = `${parts[0]}:${parts[1]}:${bytes.toString("base64url")}`;
    expect(() => both.open(altered)).to.throw(SecretBoxError, /does not open/);
    expect(() => both.open(`${parts[0]}:${parts[1]}:AAAA`)).to.throw(SecretBoxError, /too short/);
  });

  it("moves a value to the current key: one under an older key, or kept as it was", () => {
    const [oldKey, newKey] = [key(), key()];
    const box = new SecretBox([newKey, oldKey]);
    const current = box.seal(plain);
    expect(box.reseal(current), "already under the current key").to.equal(undefined);
    const moved = box.reseal(new SecretBox([oldKey]).seal(plain))!;
    expect(moved.split(":")[1]).to.equal(current.split(":")[1]);
    expect(new SecretBox([newKey]).open(moved)).to.equal(plain);
    const fromPlain = box.reseal(plain)!;
    expect(fromPlain.split(":")[1]).to.equal(current.split(":")[1]);
    expect(box.open(fromPlain)).to.equal(plain);
  });

  it("without a key keeps values as they are, and opens values kept so", () => {
    const none = new SecretBox([]);
    expect(none.seals).to.equal(false);
    expect(none.seal(plain)).to.equal(plain);
    expect(none.open(plain)).to.equal(plain);
    expect(none.reseal(plain)).to.equal(undefined);
    expect(() => none.open(new SecretBox([key()]).seal(plain))).to.throw(SecretBoxError);
    expect(() => new SecretBox([randomBytes(16)])).to.throw(SecretBoxError);
  });

  it("takes SECRETS_KEY as comma-separated base64 keys of 32 bytes, never echoing a bad one", () => {
    const env = { MONGO_URL: "mongodb://x", ADMIN_TOKEN: "t".repeat(32), SERVICE_TOKEN: "s".repeat(32) };
    const [a, b] = [key(), key()];
    const config = parseConfig(dataConfigSchema, {
      ...env,
      SECRETS_KEY: `${a.toString("base64")}, ${b.toString("base64url")}`,
    });
    expect(config.SECRETS_KEY?.map((k) => k.toString("hex"))).to.deep.equal([
      a.toString("hex"),
      b.toString("hex"),
    ]);
    expect(parseConfig(dataConfigSchema, env).SECRETS_KEY).to.equal(undefined);
    for (const bad of ["short-key", randomBytes(16).toString("base64"), " , "]) {
      let error: unknown;
      try {
        parseConfig(dataConfigSchema, { ...env, SECRETS_KEY: bad });
      } catch (e) {
        error = e;
      }
      expect(error, bad).to.be.instanceOf(ConfigError);
      expect((error as Error).message)
        .to.include("SECRETS_KEY")
        .and.not.include(bad);
    }
  });
});
