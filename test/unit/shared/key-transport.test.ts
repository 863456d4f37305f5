import { expect } from "chai";
import type { ApiError } from "../../../shared/errors.ts";
import { readKey } from "../../../shared/keys/key-transport.ts";

const schemes = ["Tessera", "CALiveAPICreator", "Espresso"];
const carrier = (method: string, authorization?: string, authParams: string[] = []) => ({
  method,
  authorization,
  authParams,
});
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as ApiError).errorCode;
  }
  return undefined;
};

describe("key transport", () => {
  it("reads '<Scheme> <key>:1' for each configured scheme, case-insensitively", () => {
    for (const s of [...schemes, "tessera", "ESPRESSO"])
      expect(readKey(carrier("GET", `${s} abc:1`), schemes)).to.equal("abc");
  });
  it("ignores everything after the first colon", () => {
    expect(readKey(carrier("PUT", "Tessera abc:whatever:2"), schemes)).to.equal("abc");
    expect(readKey(carrier("PUT", "Tessera abc"), schemes)).to.equal("abc");
  });
  it("returns undefined when no key was sent", () => {
    expect(readKey(carrier("GET"), schemes)).to.equal(undefined);
  });
  it("reads ?auth= on GET only", () => {
    expect(readKey(carrier("GET", undefined, ["abc:1"]), schemes)).to.equal("abc");
    expect(readKey(carrier("POST", undefined, ["abc:1"]), schemes)).to.equal(undefined);
    expect(readKey(carrier("DELETE", undefined, ["abc:1"]), schemes)).to.equal(undefined);
  });
  it("prefers the header over the parameter", () => {
    expect(readKey(carrier("GET", "Tessera head:1", ["param:1"]), schemes)).to.equal("head");
  });
  it("answers 4011 for keys that cannot be read", () => {
    for (const h of [
      "Bearer abc:1",
      "Tessera",
      "Tessera :1",
      "Tessera a b:1",
      `Tessera ${"x".repeat(600)}:1`,
      "",
    ]) {
      expect(
        code(() => readKey(carrier("GET", h), schemes)),
        JSON.stringify(h),
      ).to.equal(4011);
    }
    expect(code(() => readKey(carrier("GET", undefined, ["a:1", "b:1"]), schemes))).to.equal(4011);
  });
});
