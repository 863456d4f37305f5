/** SettledSignal: what wakes a waiter (a notice for its key, or its time running out). */
import { expect } from "chai";
import { SettledSignal } from "../../../services/auth/src/store/settled-signal.ts";

const tick = () => new Promise((r) => setImmediate(r));

describe("settled signal", () => {
  it("wakes every waiter of a key at its notice, and no waiter of another key", async () => {
    const signal = new SettledSignal();
    const woken: string[] = [];
    const waits = ["a", "a", "b"].map((key, i) =>
      signal.next(key, 600_000).then(() => woken.push(`${key}${i}`)),
    );
    signal.notify("a");
    await tick();
    expect(woken).to.have.members(["a0", "a1"]);
    signal.notify("b");
    await Promise.all(waits);
    expect(woken).to.have.length(3);
  });

  it("wakes a waiter nobody notifies when its time is up; a later notice finds nobody", async () => {
    const signal = new SettledSignal();
    await signal.next("a", 1);
    signal.notify("a");
    let woken = false;
    const next = signal.next("a", 600_000).then(() => {
      woken = true;
    });
    await tick();
    expect(woken, "an earlier notice does not wake a later waiter").to.equal(false);
    signal.notify("a");
    await next;
  });
});
