/** FairSharePool on an in-process IsolatePool: calls take their account's turn and are charged their CPU time. */
import { expect } from "chai";
import { LOST_ISOLATE_CHARGE_MS } from "../../../services/data/src/sandbox/fair-share-pool.ts";
import {
  FairShare,
  FairSharePool,
  IsolatePool,
  SandboxError,
  type SandboxPool,
  SandboxTimeoutError,
} from "../../../services/data/src/sandbox/index.ts";
import { ApiError, ErrorCode } from "../../../shared/errors.ts";

describe("sandbox fair-share pool", () => {
  let isolates: IsolatePool;
  let pool: FairSharePool;

  beforeEach(() => {
    isolates = new IsolatePool({ allowLoopbackFetch: false, timeoutMs: 100 });
    const share = new FairShare({
      accountConcurrency: 1,
      totalConcurrency: 4,
      accountCpuMs: 20,
      windowMs: 60_000,
      accountQueue: 10,
    });
    pool = new FairSharePool(isolates, share, { timeoutMs: 100 });
  });

  afterEach(async () => {
    await pool.close();
  });

  const SOURCE = "function spin() { while (true) {} } function ok() { return 'ok' }";

  it("refuses every program of an account that used its CPU time with 429 and Retry-After", async () => {
    const first = pool.program("acme/p1/x", SOURCE, { account: "acme" });
    const second = pool.program("acme/p2/x", SOURCE, { account: "acme" });
    // Spun to its time limit until the account's CPU time is used: on a busy machine one call's
    // 100 ms of wall time can hold less than the 20 ms of CPU time (CI saw it).
    for (let spins = 1; ; spins++) {
      const spun = await first.call("spin").catch((e: unknown) => e);
      if (spun instanceof ApiError) break;
      expect(spun).to.be.instanceOf(SandboxTimeoutError);
      expect(spins, "spins before the account's CPU time was used").to.be.below(50);
    }
    const refused = await second.call("ok").catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(ApiError);
    expect((refused as ApiError).statusCode).to.equal(429);
    expect((refused as ApiError).errorCode).to.equal(ErrorCode.sandboxShareUsed);
    expect(Number((refused as ApiError).headers["Retry-After"])).to.be.greaterThan(0);
  });

  it("still runs another account's calls", async () => {
    const hostile = pool.program("acme/p1/x", SOURCE, { account: "acme" });
    const victim = pool.program("other/p/x", SOURCE, { account: "other" });
    await hostile.call("spin").catch(() => {});
    expect(await victim.evaluate("ok()")).to.equal("ok");
    expect(await pool.call("other/p/x", "ok")).to.equal("ok");
  });

  it("counts the wait for a turn in the call's time limit", async () => {
    const p = pool.program("slow/p/x", "function wait(ms) { return new Promise((r) => setTimeout(r, ms)) }", {
      account: "slow",
    });
    const holding = p.call("wait", [80], { timeoutMs: 5000 });
    const waited = await p.call("wait", [0], { timeoutMs: 20 }).catch((e: unknown) => e);
    expect(waited).to.be.instanceOf(SandboxTimeoutError);
    await holding;
  });

  it("reports a timeout with the caller's own limit, however long the wait for a turn took", async () => {
    const p = pool.program(
      "wait/p/x",
      "function wait(ms) { return new Promise((r) => setTimeout(r, ms)) } function spin() { while (true) {} }",
      { account: "wait" },
    );
    const holding = p.call("wait", [30], { timeoutMs: 5000 });
    const spun = await p.call("spin", [], { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(spun).to.be.instanceOf(SandboxTimeoutError);
    expect((spun as SandboxTimeoutError).timeoutMs).to.equal(300);
    await holding;
  });

  it("hands the same wrapped program back for the same registration", () => {
    const a = pool.program("k/p/x", SOURCE, { account: "k" });
    expect(pool.program("k/p/x", SOURCE, { account: "k" })).to.equal(a);
    expect(pool.get("k/p/x")).to.equal(a);
  });

  it("charges a call that lost its isolate at least what replacing it costs", async () => {
    const share = new FairShare({
      accountConcurrency: 1,
      totalConcurrency: 1,
      accountCpuMs: 10_000,
      windowMs: 60_000,
      accountQueue: 1,
    });
    const crashing = {
      key: "crash/p/x",
      isRetired: false,
      call: () => Promise.reject(new SandboxError("crashed", "the isolate stopped")),
      evaluate: () => Promise.reject(new SandboxError("memory", "out of memory")),
      warm: () => Promise.resolve(),
    };
    const inner = { program: () => crashing } as unknown as SandboxPool;
    const fair = new FairSharePool(inner, share, { timeoutMs: 100 });
    const p = fair.program("crash/p/x", "", { account: "crash" });
    expect(await p.call("f").catch((e: unknown) => e)).to.be.instanceOf(SandboxError);
    expect(share.cpuUsed("crash")).to.equal(LOST_ISOLATE_CHARGE_MS);
    expect(await p.evaluate("1").catch((e: unknown) => e)).to.be.instanceOf(SandboxError);
    expect(share.cpuUsed("crash")).to.equal(2 * LOST_ISOLATE_CHARGE_MS);
  });
});
