/** The dev gateway's replicas of one service: round robin, a member left out while it is down. */
import { expect } from "chai";
import { UpstreamPool } from "../../../services/dev-stack/src/upstream-pool.ts";

describe("upstream pool", () => {
  const a = "http://127.0.0.1:1001/";
  const b = "http://127.0.0.1:1002/";
  const c = "http://127.0.0.1:1003/";

  it("takes the members in turn", () => {
    const pool = new UpstreamPool([a, b, c]);
    expect(Array.from({ length: 6 }, () => pool.pick()!.href)).to.deep.equal([a, b, c, a, b, c]);
  });

  it("leaves a member out while it is down, for a while or until it is up again", () => {
    let now = 0;
    const pool = new UpstreamPool([a, b], () => now);
    pool.down(a, 1000);
    expect(Array.from({ length: 3 }, () => pool.pick()!.href)).to.deep.equal([b, b, b]);
    now = 1000;
    expect(new Set(Array.from({ length: 4 }, () => pool.pick()!.href))).to.deep.equal(new Set([a, b]));
    pool.down(b, Number.POSITIVE_INFINITY);
    now = 1e12;
    expect(pool.pick()!.href).to.equal(a);
    pool.up(b);
    expect(new Set(Array.from({ length: 4 }, () => pool.pick()!.href))).to.deep.equal(new Set([a, b]));
  });

  it("when every member is down, tries one anyway; a member a request was refused by is skipped for it", () => {
    const pool = new UpstreamPool([a, b]);
    pool.down(a);
    pool.down(b);
    expect([a, b]).to.include(pool.pick()!.href);
    expect(pool.pick(new Set([a]))!.href).to.equal(b);
    expect(pool.pick(new Set([a, b]))).to.equal(undefined);
  });

  it("needs a member", () => {
    expect(() => new UpstreamPool([])).to.throw();
  });
});
