/** Random hex ids drawn from a pool (shared/random-hex.ts): the length asked for, hex only, never repeated. */
import { expect } from "chai";
import { randomHex } from "../../../shared/random-hex.ts";

describe("random hex ids", () => {
  it("have two hex digits per byte asked for, across refills of the pool", () => {
    for (const bytes of [1, 8, 12, 16, 1000, 5000]) {
      for (let i = 0; i < 600; i++) expect(randomHex(bytes)).to.match(new RegExp(`^[0-9a-f]{${2 * bytes}}$`));
    }
  });

  it("are not handed out twice", () => {
    const seen = new Set<string>();
    // Several refills of the pool: an id is never made of bytes given out before.
    for (let i = 0; i < 5000; i++) seen.add(randomHex(12));
    expect(seen.size).to.equal(5000);
  });
});
