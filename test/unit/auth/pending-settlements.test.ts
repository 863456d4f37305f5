/**
 * PendingSettlements: what is kept when a change fails, what a flush sends and
 * waits for, and that callers share one sending. Changes are fakes that record
 * their sendings and fail while told to.
 */
import { expect } from "chai";
import { PendingSettlements, type Settlement } from "../../../services/auth/src/store/pending-settlements.ts";

class FakeChange implements Settlement {
  readonly key: string;
  failing: boolean;
  sendings: boolean[] = [];
  #gate: Promise<void> = Promise.resolve();
  constructor(key: string, failing = false) {
    this.key = key;
    this.failing = failing;
  }
  /** Holds every sending until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.#gate = new Promise((r) => {
      release = r;
    });
    return release;
  }
  async send(again: boolean): Promise<void> {
    this.sendings.push(again);
    await this.#gate;
    if (this.failing) throw new Error(`${this.key} unavailable`);
  }
}

describe("pending settlements", () => {
  it("sends a change once when it goes through; keeps nothing", async () => {
    const pending = new PendingSettlements(60_000);
    const change = new FakeChange("u");
    await pending.settle(change);
    await pending.flush("u");
    expect(change.sendings).to.deep.equal([false]);
    expect(pending.size).to.equal(0);
  });

  it("keeps a change that failed, without failing; a flush sends it again, marked as again", async () => {
    const pending = new PendingSettlements(60_000);
    const change = new FakeChange("u", true);
    await pending.settle(change);
    expect(pending.size).to.equal(1);
    let error: unknown;
    await pending.flush("u").catch((e: unknown) => {
      error = e;
    });
    expect((error as Error).message).to.equal("u unavailable");
    change.failing = false;
    await pending.flush("u");
    expect(change.sendings).to.deep.equal([false, true, true]);
    expect(pending.size).to.equal(0);
  });

  it("a flush for one key fails only on that key's changes; the others are sent along", async () => {
    const pending = new PendingSettlements(60_000);
    const down = new FakeChange("on-a-dead-shard", true);
    const up = new FakeChange("elsewhere", true);
    await pending.settle(down);
    await pending.settle(up);
    up.failing = false;
    await pending.flush("elsewhere");
    await pending.flush("a-key-with-nothing-kept");
    expect(up.sendings).to.deep.equal([false, true]);
    expect(pending.size).to.equal(1);
    let failed = false;
    await pending.flush().catch(() => {
      failed = true;
    });
    expect(failed, "a flush of everything waits for every key").to.equal(true);
  });

  it("callers arriving during a sending share it; changes kept meanwhile are sent before they go on", async () => {
    const pending = new PendingSettlements(60_000);
    const first = new FakeChange("u", true);
    await pending.settle(first);
    first.failing = false;
    const release = first.hold();
    const callers = [pending.flush("u"), pending.flush("u"), pending.flush()];
    pending.keep(new FakeChange("u")); // kept while the first sending is held
    release();
    await Promise.all(callers);
    expect(first.sendings, "one sending for three callers").to.deep.equal([false, true]);
    expect(pending.size).to.equal(0);
  });

  it("sends kept changes again in the background until one goes through", async () => {
    const pending = new PendingSettlements(5);
    const change = new FakeChange("u", true);
    await pending.settle(change);
    while (change.sendings.length < 3) await new Promise((r) => setTimeout(r, 5));
    change.failing = false;
    while (pending.size > 0) await new Promise((r) => setTimeout(r, 5));
    expect(change.sendings.slice(1).every((again) => again)).to.equal(true);
  });
});
