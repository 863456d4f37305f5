import { expect } from "chai";
import { anyLocked, lockRows } from "../../../services/data/src/logic/row-locks.ts";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("logic: in-process row locks", () => {
  it("holders of a common row take turns; others run at once", async () => {
    const log: string[] = [];
    const releaseA = await lockRows(["x", "y"]);
    expect(anyLocked(["y"])).to.equal(true);
    const b = lockRows(["y"]).then((release) => {
      log.push("b");
      release();
    });
    const c = lockRows(["z"]).then((release) => {
      log.push("c");
      release();
    });
    await tick();
    expect(log).to.deep.equal(["c"]);
    releaseA();
    await Promise.all([b, c]);
    expect(log).to.deep.equal(["c", "b"]);
    expect(anyLocked(["x", "y", "z"])).to.equal(false);
  });

  it("never deadlocks when two holders want the same rows in different orders", async () => {
    let inside = 0;
    let max = 0;
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const release = await lockRows(i % 2 ? ["a", "b"] : ["b", "a"]);
        inside++;
        max = Math.max(max, inside);
        await tick();
        inside--;
        release();
      }),
    );
    expect(max).to.equal(1);
  });
});
