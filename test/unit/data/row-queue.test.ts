import { expect } from "chai";
import { RowQueue } from "../../../services/data/src/store/row-queue.ts";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("write path: the in-process row queue", () => {
  it("holders of a common row take turns; others run at once", async () => {
    const queue = new RowQueue();
    const log: string[] = [];
    const releaseA = await queue.enter(["x", "y"]);
    expect(queue.isBusy(["y"])).to.equal(true);
    const b = queue.enter(["y"]).then((release) => {
      log.push("b");
      release();
    });
    const c = queue.enter(["z"]).then((release) => {
      log.push("c");
      release();
    });
    await tick();
    expect(log).to.deep.equal(["c"]);
    releaseA();
    await Promise.all([b, c]);
    expect(log).to.deep.equal(["c", "b"]);
    expect(queue.isBusy(["x", "y", "z"])).to.equal(false);
  });

  it("never deadlocks when two holders want the same rows in different orders", async () => {
    const queue = new RowQueue();
    let inside = 0;
    let max = 0;
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const release = await queue.enter(i % 2 ? ["a", "b"] : ["b", "a"]);
        inside++;
        max = Math.max(max, inside);
        await tick();
        inside--;
        release();
      }),
    );
    expect(max).to.equal(1);
  });

  it("queues are independent", async () => {
    const one = new RowQueue();
    const two = new RowQueue();
    await one.enter(["x"]);
    expect(two.isBusy(["x"])).to.equal(false);
    const release = await two.enter(["x"]);
    release();
  });
});
