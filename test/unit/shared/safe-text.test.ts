/** Outside text made safe to log and show (shared/safe-text.ts): the sandbox's and the login providers'. */
import { expect } from "chai";
import { safeText } from "../../../shared/safe-text.ts";

describe("safe text", () => {
  it("keeps line breaks and tabs unless asked for one line, which is trimmed", () => {
    expect(safeText("a\u0000b\n\tc ")).to.equal("a b\n\tc ");
    expect(safeText(" a\u0000b\n\tc ", 500, "join")).to.equal("a b  c");
  });

  it("cuts at the most characters, marking the cut", () => {
    expect(safeText("abcdef", 3)).to.equal("abc…");
    expect(safeText("abc", 3)).to.equal("abc");
    expect(safeText({ toString: () => "xyz" }, 2)).to.equal("xy…");
  });
});
