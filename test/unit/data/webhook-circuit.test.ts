/** A webhook subscription's circuit (hooks/circuit.ts): when it opens, who probes, what closes it. */
import { expect } from "chai";
import {
  afterAttempt,
  type Circuit,
  CLOSED,
  circuitText,
  parseCircuit,
  probeFree,
  probing,
  sendingNow,
} from "../../../services/data/src/hooks/circuit.ts";

const policy = { timeouts: 3, backoff: { baseMs: 1000, capMs: 8000 } };
/** No jitter: the cool-down in full. */
const outcome = (c: Circuit, timedOut: boolean, now: number) => afterAttempt(c, timedOut, now, policy, 0);

describe("webhook circuit", () => {
  it("opens after the time-outs in a row, not when an answer comes in between", () => {
    let c = outcome(outcome(CLOSED, true, 0), true, 10);
    expect(c).to.include({ state: "closed", timeouts: 2 });
    expect(outcome(c, false, 20)).to.deep.equal(CLOSED);
    c = outcome(c, true, 20);
    expect(c).to.deep.equal({
      state: "open",
      timeouts: 3,
      opens: 1,
      openedAt: 20,
      until: 1020,
      prober: null,
    });
    // Attempts under way when it opened count on, without changing when the probe may go.
    expect(outcome(c, true, 30)).to.include({ state: "open", timeouts: 4, until: 1020 });
  });

  it("one process takes the probe once the cool-down is over; only it sends, until its hold runs out", () => {
    const open = outcome(outcome(outcome(CLOSED, true, 0), true, 0), true, 0);
    expect(probeFree(open, 999)).to.equal(false);
    expect(sendingNow(open, "a", 999)).to.equal("wait");
    expect(probeFree(open, 1000)).to.equal(true);
    const held = probing(open, "a", 1000, 500);
    expect(held).to.include({ state: "half-open", prober: "a", until: 1500 });
    expect(sendingNow(held, "a", 1200)).to.equal("probe");
    expect(sendingNow(held, "b", 1200)).to.equal("wait");
    expect(probeFree(held, 1200)).to.equal(false);
    // Its prober went away: another may take it.
    expect(probeFree(held, 1500)).to.equal(true);
    expect(sendingNow(held, "a", 1500)).to.equal("wait");
  });

  it("an answered probe closes it; a probe that times out opens it again for twice as long, up to the cap", () => {
    let c = outcome(outcome(outcome(CLOSED, true, 0), true, 0), true, 0);
    const held = probing(c, "a", 1000, 500);
    expect(outcome(held, false, 1100)).to.deep.equal(CLOSED);
    expect(sendingNow(outcome(held, false, 1100), "b", 1100)).to.equal("send");
    const lengths: number[] = [];
    for (let i = 0; i < 5; i++) {
      c = outcome(probing(c, "a", c.until!, 500), true, c.until!);
      lengths.push(c.until! - c.openedAt!);
    }
    expect(lengths).to.deep.equal([2000, 4000, 8000, 8000, 8000]);
    expect(c.state).to.equal("open");
  });

  it("the cool-down is shortened by up to a quarter at random", () => {
    const opened = (random: number) =>
      afterAttempt({ ...CLOSED, timeouts: 2 }, true, 0, policy, random).until as number;
    expect(opened(0)).to.equal(1000);
    expect(opened(0.999)).to.be.within(750, 751);
  });

  it("is stored only when it is not closed with no time-outs; the stored form reads back", () => {
    expect(circuitText(CLOSED)).to.equal("");
    expect(parseCircuit("")).to.deep.equal(CLOSED);
    const counting = outcome(CLOSED, true, 0);
    expect(parseCircuit(circuitText(counting))).to.deep.equal(counting);
    const open = outcome(outcome(counting, true, 1), true, 2);
    expect(parseCircuit(circuitText(open))).to.deep.equal(open);
  });
});
