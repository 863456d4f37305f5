/** Each account's share of the sandbox: turns, fairness between accounts, the CPU budget (clock injected). */
import { expect } from "chai";
import {
  CpuWindow,
  FairShare,
  type FairShareLimits,
  FairShareRefusal,
  type Turn,
} from "../../../services/data/src/sandbox/fair-share.ts";

const LIMITS: FairShareLimits = {
  accountConcurrency: 2,
  totalConcurrency: 3,
  accountCpuMs: 1000,
  windowMs: 10_000,
  accountQueue: 100,
};

function setup(limits: Partial<FairShareLimits> = {}) {
  const clock = { now: 1_000_000 };
  const share = new FairShare({ ...LIMITS, ...limits }, () => clock.now);
  /** Turns granted so far, by account, in the order they came. */
  const granted: string[] = [];
  const turns: Turn[] = [];
  const ask = (account: string, signal?: AbortSignal) =>
    share.turn(account, signal).then((turn) => {
      granted.push(account);
      turns.push(turn);
      return turn;
    });
  return { clock, share, granted, turns, ask };
}

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("sandbox fair share", () => {
  it("runs an account's calls up to its concurrency at once; the next waits for a turn", async () => {
    const { share, granted, ask } = setup();
    const first = await ask("a");
    await ask("a");
    const third = ask("a");
    await settle();
    expect(granted).to.deep.equal(["a", "a"]);
    expect(share.stats()).to.deep.equal({ running: 2, waiting: 1, accounts: 1 });
    first.end(0);
    await third;
    expect(granted).to.deep.equal(["a", "a", "a"]);
  });

  it("keeps a turn for another account while one account is at its own limit", async () => {
    const { ask, granted } = setup();
    await ask("hostile");
    await ask("hostile");
    void ask("hostile");
    await ask("victim");
    expect(granted).to.deep.equal(["hostile", "hostile", "victim"]);
  });

  it("gives free turns to the waiting accounts in turn, not to whoever queued most", async () => {
    const { ask, granted, turns } = setup({ accountConcurrency: 3, totalConcurrency: 1 });
    await ask("first");
    for (let i = 0; i < 4; i++) void ask("hostile");
    void ask("victim");
    void ask("other");
    for (let i = 0; i < 6; i++) {
      turns.at(-1)!.end(0);
      await settle();
    }
    expect(granted).to.deep.equal(["first", "hostile", "victim", "other", "hostile", "hostile", "hostile"]);
  });

  it("refuses an account over its CPU budget, with the time until it is under again", async () => {
    const { clock, ask, share } = setup();
    const turn = await ask("a");
    clock.now += 500;
    turn.end(1200);
    const refusal = await share.turn("a").catch((e: unknown) => e);
    expect(refusal).to.be.instanceOf(FairShareRefusal);
    expect((refusal as FairShareRefusal).reason).to.equal("cpu");
    // Charged in the 1 s slice from 1_000_000: it leaves the 10 s window at 1_010_000.
    expect((refusal as FairShareRefusal).retryAfterMs).to.equal(9500);
  });

  it("takes the account's calls again once its CPU time has left the window", async () => {
    const { clock, ask, share } = setup();
    (await ask("a")).end(1200);
    await share.turn("a").then(
      () => expect.fail("over budget"),
      () => {},
    );
    clock.now += 10_000;
    expect(share.cpuUsed("a")).to.equal(0);
    await ask("a");
  });

  it("charges every project of an account to one budget, and leaves other accounts alone", async () => {
    const { ask, share } = setup();
    (await ask("acme")).end(600);
    (await ask("acme")).end(600);
    const refusal = await share.turn("acme").catch((e: unknown) => e);
    expect(refusal).to.be.instanceOf(FairShareRefusal);
    await ask("other");
  });

  it("holds an account to its own budget (its plan's) when its call names one", async () => {
    const { share } = setup();
    (await share.turn("big", undefined, 5000)).end(1200);
    (await share.turn("big", undefined, 5000)).end(1200);
    // 2400 ms used: over the default 1000 ms, under its own 5000 ms.
    (await share.turn("big", undefined, 5000)).end(0);
    (await share.turn("small", undefined, 100)).end(150);
    const refusal = await share.turn("small", undefined, 100).catch((e: unknown) => e);
    expect(refusal).to.be.instanceOf(FairShareRefusal);
  });

  it("refuses the waiting calls of an account that goes over its budget meanwhile", async () => {
    const { ask } = setup();
    const one = await ask("a");
    await ask("a");
    const waiting = ask("a");
    one.end(5000);
    const refusal = await waiting.catch((e: unknown) => e);
    expect(refusal).to.be.instanceOf(FairShareRefusal);
  });

  it("refuses a call past the account's queue at once", async () => {
    const { ask, share } = setup({ accountQueue: 1 });
    await ask("a");
    await ask("a");
    void ask("a");
    const refusal = await share.turn("a").catch((e: unknown) => e);
    expect(refusal).to.be.instanceOf(FairShareRefusal);
    expect((refusal as FairShareRefusal).reason).to.equal("queue");
  });

  it("gives up a wait when its signal is aborted, and the turn goes to the next", async () => {
    const { ask, share, granted } = setup({ accountConcurrency: 1 });
    const running = await ask("a");
    const abort = new AbortController();
    const given = ask("a", abort.signal).catch((e: unknown) => e);
    const next = ask("a");
    abort.abort(new Error("time is up"));
    expect(((await given) as Error).message).to.equal("time is up");
    running.end(0);
    await next;
    expect(granted).to.deep.equal(["a", "a"]);
    expect(share.stats().waiting).to.equal(0);
  });

  it("ends a turn once, however often end is called", async () => {
    const { ask, share } = setup();
    const turn = await ask("a");
    turn.end(10);
    turn.end(10);
    expect(share.stats().running).to.equal(0);
    expect(share.cpuUsed("a")).to.equal(10);
  });

  it("forgets an account once nothing of it runs, waits or counts", async () => {
    const { clock, ask, share } = setup();
    (await ask("a")).end(0);
    expect(share.stats().accounts).to.equal(0);
    (await ask("b")).end(5);
    clock.now += 20_000;
    for (let i = 0; i < 1024; i++) (await ask("c")).end(0);
    expect(share.stats().accounts).to.equal(0);
  });
});

describe("sandbox CPU window", () => {
  it("sums the charges of the last window and drops older ones slice by slice", () => {
    const w = new CpuWindow(1000);
    w.charge(10, 0);
    w.charge(20, 450);
    expect(w.used(999)).to.equal(30);
    expect(w.used(1000)).to.equal(20);
    expect(w.used(1500)).to.equal(0);
  });

  it("says how long until the usage is below a budget", () => {
    const w = new CpuWindow(1000);
    w.charge(50, 0);
    w.charge(50, 500);
    expect(w.waitBelow(200, 600)).to.equal(0);
    expect(w.waitBelow(100, 600)).to.equal(400);
    expect(w.waitBelow(40, 600)).to.equal(900);
  });
});
