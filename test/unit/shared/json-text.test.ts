/** The request body checks (shared/http/json-text.ts): pure, on text and parsed values. */
import { expect } from "chai";
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBytes } from "../../../shared/http/json-text.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("request body checks", () => {
  it("accepts a body nested exactly MAX_JSON_DEPTH levels", () => {
    expect(parseJsonBytes(bytes(nested(MAX_JSON_DEPTH)))).to.have.key("value");
  });

  it("refuses a body nested one level deeper", () => {
    expect(parseJsonBytes(bytes(nested(MAX_JSON_DEPTH + 1)))).to.have.key("problem");
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    expect(nestsDeeperThan(`["\\"${"[".repeat(100)}"]`, 2)).to.equal(false);
  });

  it("refuses bytes that are not UTF-8", () => {
    expect(parseJsonBytes(new Uint8Array([0x22, 0xc3, 0x28, 0x22]))).to.deep.equal({
      problem: "The request body is not valid UTF-8",
    });
  });

  it("refuses a lone surrogate in a value, and in a property name", () => {
    expect(parseJsonBytes(bytes('{"a":["\\udfff"]}'))).to.have.key("problem");
    expect(parseJsonBytes(bytes('{"\\ud800":1}'))).to.have.key("problem");
  });

  it("accepts a surrogate pair written as escapes", () => {
    expect(parseJsonBytes(bytes('{"a":"\\ud83d\\ude00"}'))).to.deep.equal({ value: { a: "😀" } });
  });

  it("refuses a __proto__ property anywhere", () => {
    expect(parseJsonBytes(bytes('[{"x":{"__proto__":{}}}]'))).to.have.key("problem");
  });

  it("checks an array of a million items without running out of stack", () => {
    expect(parseJsonBytes(bytes(`[${"1,".repeat(1_000_000)}1]`))).to.have.key("value");
  });
});
