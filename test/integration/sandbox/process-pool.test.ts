/**
 * ProcessSandboxPool, the data service's side of the sandbox host processes,
 * against real child processes: calls and host functions across the process
 * boundary, the caller's deadlines, and what happens when a process crashes,
 * has a catastrophic isolate, stops answering, or is shut down.
 */
import { readdirSync, readFileSync } from "node:fs";
import { expect } from "chai";
import {
  type HostCallInfo,
  ProcessSandboxPool,
  type ProcessSandboxPoolOptions,
  SandboxError,
  SandboxHostError,
  SandboxTimeoutError,
} from "../../../services/data/src/sandbox/index.ts";
import { fingerprint } from "../../../shared/loggable-error.ts";
import { isRunning, sandboxProcessPids } from "../../support/data-process.ts";
import { memoryLogger, rejection, timed, until } from "../../unit/sandbox/support.ts";

const HOG = "function hog() { const m = new Map(); let i = 0; while (true) { m.set(i, 'x' + i); i++; } }";
const SLOW =
  "let calls = 0; async function slow(ms) { calls++; await new Promise((r) => setTimeout(r, ms)); return { done: ms, calls } }";
/** `hold()` runs until the test releases it: the order of events decides, not how long anything takes. */
const HOLD = "async function hold() { await gate.wait(); return 'held' }";

describe("sandbox host processes (ProcessSandboxPool)", function () {
  this.timeout(30_000);
  let pool: ProcessSandboxPool;
  let logger: ReturnType<typeof memoryLogger>;
  let restarts: string[];

  function open(options: Partial<ProcessSandboxPoolOptions> = {}): ProcessSandboxPool {
    logger = memoryLogger();
    restarts = [];
    pool = new ProcessSandboxPool({
      allowLoopbackFetch: false,
      timeoutMs: 5000,
      memoryLimitMb: 8,
      processes: 1,
      logger,
      onProcessRestart: (reason) => restarts.push(reason),
      ...options,
    });
    return pool;
  }

  const sandboxes = () => sandboxProcessPids(process.pid);

  /** A program whose `hold()` calls are inside their sandbox process (`inside`) until `release()`. */
  function held(key: string, source = "") {
    let release: () => void = () => {};
    let entered: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const program = pool.program(key, `${HOLD}\n${source}`, {
      hostFunctions: {
        "gate.wait": () => {
          entered();
          return released;
        },
      },
    });
    return { program, inside, release };
  }

  afterEach(async () => {
    await pool?.close();
  });

  it("runs programs in its sandbox processes, spread by key, each registered with its first call", async () => {
    open({ processes: 2 });
    expect(sandboxes()).to.have.length(2);
    const programs = Array.from({ length: 8 }, (_, i) =>
      pool.program(`acct${i}/p/auth`, `let n = 0; function next() { return [${i}, ++n] }`),
    );
    for (const [i, p] of programs.entries()) {
      expect(await p.call("next")).to.deep.equal([i, 1]);
      expect(await p.call("next")).to.deep.equal([i, 2]);
    }
    expect(await pool.evaluate("acct3/p/auth", "n * factor", { factor: 10 })).to.equal(20);
    const stats = pool.stats();
    expect(stats.programs).to.equal(8);
    expect(stats.isolates).to.equal(8);
    expect(stats.processes).to.deep.equal({ running: 2, retiring: 0, restarts: {} });
    expect(sandboxes()).to.have.length(2);
  });

  it("runs customer code at a lower CPU priority than the service: every thread of a sandbox process is niced", async () => {
    open({ niceness: 7 });
    expect(await pool.program("nice/p/x", "function f() { return 1 }").call("f")).to.equal(1);
    const [pid] = sandboxes();
    const niceOf = (task: string) => {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
    };
    const threads = readdirSync(`/proc/${pid}/task`);
    expect(threads.length).to.be.greaterThan(1);
    expect(threads.map(niceOf)).to.deep.equal(threads.map(() => 7));
  });

  it("runs async host functions here, with the caller's context, deadline, signal and call state", async () => {
    open();
    const context = { transaction: Symbol("never copied") };
    const seen: HostCallInfo[] = [];
    const p = pool.program(
      "t/host",
      "async function go(x) { const a = await svc.count(x); const b = await svc.count(x); return [a, b] }\n" +
        "async function fail(name) { try { await svc[name](); return 'no error' } catch (e) { return e.name + ': ' + e.message } }",
      {
        hostFunctions: {
          "svc.count": (args, info) => {
            seen.push(info);
            const n = ((info.callState.get("n") as number) ?? 0) + 1;
            info.callState.set("n", n);
            return { arg: args[0], n };
          },
          "svc.refuse": async () => {
            throw new SandboxHostError("not for you");
          },
          "svc.crash": async () => {
            throw new Error("internal detail /etc/secret");
          },
          "svc.huge": () => "x".repeat(2 * 1024 * 1024),
        },
      },
    );
    const started = Date.now();
    expect(await p.call("go", ["a"], { timeoutMs: 3000, context })).to.deep.equal([
      { arg: "a", n: 1 },
      { arg: "a", n: 2 },
    ]);
    expect(await p.call("go", ["b"], { context })).to.deep.equal([
      { arg: "b", n: 1 },
      { arg: "b", n: 2 },
    ]);
    expect(seen).to.have.length(4);
    expect(seen[0]!.context).to.equal(context);
    expect(seen[0]!.programKey).to.equal("t/host");
    expect(seen[0]!.callState).to.equal(seen[1]!.callState);
    expect(seen[2]!.callState).to.not.equal(seen[0]!.callState);
    expect(seen[0]!.deadline).to.be.within(started + 3000, Date.now() + 3000);
    expect(seen[0]!.deadline).to.equal(seen[1]!.deadline);
    expect(
      seen.every((info) => info.signal.aborted),
      "aborted once the call is over",
    ).to.equal(true);

    expect(await p.call("fail", ["refuse"])).to.equal("TesseraHostError: not for you");
    expect(await p.call("fail", ["crash"])).to.equal("TesseraHostError: Host function svc.crash failed");
    // The failure is logged by its fingerprint: the message (which can quote request data) never is.
    expect(logger.text()).to.contain(fingerprint("internal detail /etc/secret"));
    expect(logger.text()).to.not.contain("internal detail");
    expect(await p.call("fail", ["huge"])).to.match(/The answer of svc.huge is larger than 1048576 bytes/);
  });

  it("refuses sync host functions: only the in-process pool can run them", () => {
    open();
    expect(() =>
      pool.program("t/sync", "function f() {}", { hostFunctions: { "x.y": { fn: () => 1, sync: true } } }),
    ).to.throw(TypeError, /sync/);
  });

  it("keeps the caller's deadline: queueing counts, a timeout names the caller's limit, the process stays", async () => {
    open({ maxIsolatesPerProject: 1 });
    const {
      program: p,
      inside,
      release,
    } = held("t/deadline", `${SLOW}\nfunction spin() { while (true) {} }`);
    await p.warm();
    // The only isolate is held until the second call has ended: that one never leaves the queue.
    const first = p.call("hold", [], { timeoutMs: 20_000 });
    await inside;
    const second = await timed(() => p.call("slow", [1], { timeoutMs: 300 }));
    expect(second.error).to.be.instanceOf(SandboxTimeoutError);
    expect((second.error as SandboxTimeoutError).timeoutMs).to.equal(300);
    expect((second.error as Error).message).to.contain("within 300 ms");
    expect(second.ms, "not before its deadline").to.be.at.least(280);
    release();
    expect(await first).to.equal("held");
    expect(restarts, "answered by the process, not given up on").to.deep.equal([]);
  });

  it("a call spinning in its isolate is stopped by the process at its own deadline, not by the grace period", async () => {
    open();
    const p = pool.program("t/spin", `${SLOW}\nfunction spin() { while (true) {} }`);
    const spin = await rejection(p.call("spin", [], { timeoutMs: 250 }));
    expect(spin).to.be.instanceOf(SandboxTimeoutError);
    expect((spin as SandboxTimeoutError).timeoutMs).to.equal(250);
    // Had the process not answered, the call would have ended with the grace period and the process replaced.
    expect(restarts).to.deep.equal([]);
    expect(await p.call("slow", [1])).to.deep.include({ done: 1 });
    expect(restarts).to.deep.equal([]);
  });

  it("a call waiting for its process to start fails at its own deadline; the process is not blamed", async () => {
    open();
    // Stopped before it could start: the call can only end by its own deadline, while the process is still starting.
    const starting = sandboxes()[0]!;
    process.kill(starting, "SIGSTOP");
    try {
      const p = pool.program("t/early", SLOW);
      const early = await rejection(p.call("slow", [1], { timeoutMs: 300 }));
      expect(early).to.be.instanceOf(SandboxTimeoutError);
      expect((early as SandboxTimeoutError).timeoutMs).to.equal(300);
      process.kill(starting, "SIGCONT");
      expect(await p.call("slow", [1])).to.deep.equal({ done: 1, calls: 1 });
      expect(sandboxes(), "the same process serves").to.deep.equal([starting]);
      expect(restarts).to.deep.equal([]);
    } finally {
      if (isRunning(starting)) process.kill(starting, "SIGCONT");
    }
  });

  it("a process that dies before it has started is replaced by the next call that needs one (no start-up loop)", async () => {
    open();
    const first = sandboxes()[0]!;
    process.kill(first, "SIGKILL");
    // Whether to start another is decided when the process is given up: none took its slot.
    await until(() => pool.stats().processes?.running === 0, "the dead process given up");
    expect(sandboxes().filter(isRunning), "not started again by itself").to.deep.equal([]);
    expect(await pool.program("t/late", "function f() { return 1 }").call("f")).to.equal(1);
    expect(restarts).to.deep.equal(["crashed"]);
  });

  it("a sandbox process that dies mid-call: the call fails at once, a fresh process serves the next one", async () => {
    open();
    const { program: p, inside } = held("t/crash", SLOW);
    expect(await p.call("slow", [1])).to.deep.equal({ done: 1, calls: 1 });
    const victim = sandboxes()[0]!;
    // Its deadline is far away: ended by it, the call would fail as a timeout.
    const pending = rejection(p.call("hold", [], { timeoutMs: 20_000 }));
    await inside;
    process.kill(victim, "SIGKILL");
    expect((await pending).kind, "failed when the process died, not at its deadline").to.equal("crashed");
    expect(restarts).to.deep.equal(["crashed"]);
    // registered again in the new process: its state starts afresh
    expect(await p.call("slow", [1])).to.deep.equal({ done: 1, calls: 1 });
    expect(sandboxes()).to.have.length(1);
    expect(sandboxes()[0]).to.not.equal(victim);
    expect(pool.stats().processes?.restarts).to.deep.equal({ crashed: 1 });
  });

  it("a catastrophic isolate: its call fails at once (memory), other calls in that process finish, then it is replaced", async () => {
    open();
    const { program: slow, inside, release } = held("friend/p/auth", SLOW);
    const hog = pool.program("evil/p/auth", HOG);
    await slow.warm();
    const first = sandboxes()[0]!;
    // In the process until the test lets it go, after the catastrophic error.
    const inFlight = slow.call("hold", [], { timeoutMs: 20_000 });
    await inside;
    // Its deadline is far away: ended by it (and the grace period), the call would fail as a timeout.
    const failed = await rejection(hog.call("hog", [], { timeoutMs: 20_000 }));
    expect(failed.kind, "failed at the catastrophic error, not at its deadline").to.equal("memory");
    expect(failed.message).to.match(/ran out of memory/);
    expect(restarts).to.deep.equal(["catastrophic"]);

    // the retiring process finishes what it runs; new calls go to the fresh one
    expect(isRunning(first)).to.equal(true);
    expect(await slow.call("slow", [1])).to.deep.equal({ done: 1, calls: 1 });
    expect(sandboxes().filter(isRunning)).to.have.length(2);
    release();
    expect(await inFlight).to.equal("held");
    await until(() => !isRunning(first) && pool.stats().processes?.retiring === 0);
    expect(sandboxes()).to.have.length(1);
    const stats = pool.stats();
    expect(stats.catastrophicErrors).to.equal(1);
    expect(stats.disposed.catastrophic).to.equal(1);
    expect(stats.processes).to.deep.include({ running: 1, retiring: 0 });
  });

  it("a hostile program repeating catastrophic errors: calls keep failing fast, processes stay bounded", async () => {
    open({ processes: 2 });
    const hog = pool.program("evil/p/auth", HOG);
    const friend = pool.program("friend/p/auth", "function hi() { return 'hi' }");
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, sandboxes().filter(isRunning).length);
    }, 10);
    try {
      for (let round = 0; round < 4; round++) {
        const kinds = await Promise.all([1, 2, 3].map(() => rejection(hog.call("hog")).then((e) => e.kind)));
        expect(
          kinds.every((k) => k === "memory" || k === "crashed"),
          kinds.join(),
        ).to.equal(true);
        expect(await friend.call("hi")).to.equal("hi");
      }
    } finally {
      clearInterval(sampler);
    }
    // two serving, at most two retiring, and one that was just killed may not be reaped yet
    expect(most, "sandbox processes at any time").to.be.at.most(5);
    await until(() => sandboxes().length === 2);
    expect(restarts.length).to.be.at.least(4);
  });

  it("a process that stops answering: the call fails after its deadline and a grace period, the process is replaced", async () => {
    open();
    const p = pool.program("t/stopped", SLOW);
    await p.warm();
    const stopped = sandboxes()[0]!;
    process.kill(stopped, "SIGSTOP");
    try {
      const outcome = await timed(() => p.call("slow", [1], { timeoutMs: 300 }));
      expect(outcome.error).to.be.instanceOf(SandboxTimeoutError);
      expect((outcome.error as SandboxTimeoutError).timeoutMs).to.equal(300);
      // Its deadline, then the grace period (1 s) for an answer that never comes.
      expect(outcome.ms, "not before deadline and grace period").to.be.at.least(1250);
      expect(restarts).to.deep.equal(["unresponsive"]);
      await until(() => !isRunning(stopped));
      expect(await p.call("slow", [1])).to.deep.equal({ done: 1, calls: 1 });
    } finally {
      if (isRunning(stopped)) process.kill(stopped, "SIGKILL");
    }
  });

  it("new code for a key retires the old program in its process; drop forgets the key", async () => {
    open();
    const v1 = pool.program("t/versions", "function v() { return 1 }");
    expect(await v1.call("v")).to.equal(1);
    const v2 = pool.program("t/versions", "function v() { return 2 }");
    expect(v1.isRetired).to.equal(true);
    expect(await v2.call("v")).to.equal(2);
    expect(pool.program("t/versions", "function v() { return 2 }")).to.equal(v2);
    pool.drop("t/versions");
    expect(v2.isRetired).to.equal(true);
    expect(pool.get("t/versions")).to.equal(undefined);
    expect((await rejection(pool.call("t/versions", "v"))).kind).to.equal("argument");
    const v3 = pool.program("t/versions", "function v() { return 3 }");
    expect(await v3.call("v")).to.equal(3);
  });

  it("close kills every sandbox process; pending and later calls fail as unavailable", async () => {
    open({ processes: 2 });
    const { program: p, inside } = held("t/close", SLOW);
    await p.warm();
    const pids = sandboxes();
    expect(pids).to.have.length(2);
    const pending = rejection(p.call("hold", [], { timeoutMs: 20_000 }));
    await inside;
    await pool.close();
    expect((await pending).kind).to.equal("unavailable");
    expect(pids.filter(isRunning)).to.deep.equal([]);
    expect((await rejection(p.call("slow", [1]))).kind).to.equal("unavailable");
    expect(() => pool.program("t/other", "")).to.throw(SandboxError);
  });
});
