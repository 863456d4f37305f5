/**
 * IsolatePool / SandboxProgram: data in and out is copied plain JSON, user
 * errors become SandboxError, limits (time, memory, result size) hold, isolates
 * are reused, rebuilt on code change and recycled when they misbehave.
 */

import { expect } from "chai";
import {
  IsolatePool,
  SandboxError,
  SandboxHostError,
  SandboxTimeoutError,
} from "../../../services/data/src/sandbox/index.ts";
import { fingerprint } from "../../../shared/loggable-error.ts";
import { memoryLogger, rejection, timed, turnOfEventLoop, until } from "./support.ts";

describe("sandbox pool", () => {
  let pool: IsolatePool;

  beforeEach(() => {
    pool = new IsolatePool({ allowLoopbackFetch: false, timeoutMs: 300 });
  });

  afterEach(async () => {
    await pool.close();
  });

  describe("data in and out", () => {
    it("calls a global function and a dotted path with copied JSON arguments", async () => {
      const p = pool.program(
        "t/calls",
        "function add(a, b) { return a + b }\nconst lib = { k: 2, times(x) { return this.k * x } };",
      );
      expect(await p.call("add", [2, 3])).to.equal(5);
      expect(await p.call("lib.times", [21])).to.equal(42);
      expect(await pool.call("t/calls", "add", ["a", "b"])).to.equal("ab");
    });

    it("copies arguments in and results out (no shared objects)", async () => {
      const p = pool.program(
        "t/copy",
        "let kept; function keep(o) { kept = o; o.inside = true; return o } function get() { return kept }",
      );
      const arg = { a: 1, nested: { b: [1, 2] } };
      const result = (await p.call("keep", [arg])) as Record<string, unknown>;
      expect(arg).to.deep.equal({ a: 1, nested: { b: [1, 2] } });
      expect(result).to.deep.equal({ a: 1, nested: { b: [1, 2] }, inside: true });
      (result.nested as { b: number[] }).b.push(3);
      expect(await p.call("get")).to.deep.equal({ a: 1, nested: { b: [1, 2] }, inside: true });
    });

    it("evaluates expressions and async bodies with bindings", async () => {
      const p = pool.program("t/eval", "function double(x) { return 2 * x }");
      expect(
        await p.evaluate("row.balance <= row.credit_limit", { row: { balance: 5, credit_limit: 10 } }),
      ).to.equal(true);
      expect(
        await p.evaluate("double(row.qty) + (oldRow === null ? 0 : oldRow.qty)", {
          row: { qty: 2 },
          oldRow: null,
        }),
      ).to.equal(4);
      expect(
        await p.evaluate("const x = await Promise.resolve(20); return x + 1;", {}, { kind: "body" }),
      ).to.equal(21);
      expect(await p.evaluate("undefined")).to.equal(undefined);
      expect(await pool.evaluate("t/eval", "new Date(0)")).to.equal("1970-01-01T00:00:00.000Z");
    });

    it("refuses arguments and bindings that are not plain JSON", async () => {
      const p = pool.program("t/args", "function id(x) { return x }");
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      expect((await rejection(p.call("id", [cyclic]))).kind).to.equal("argument");
      expect((await rejection(p.call("id", [() => 1]))).kind).to.equal("argument");
      expect((await rejection(p.call("id", [10n]))).kind).to.equal("argument");
      expect((await rejection(p.evaluate("1", { "bad-name": 1 }))).kind).to.equal("argument");
      expect((await rejection(p.evaluate("1", { this: 1 }))).kind).to.equal("argument");
      expect((await rejection(p.call("id; process", []))).kind).to.equal("argument");
      expect((await rejection(pool.call("t/none", "id"))).kind).to.equal("argument");
    });

    it("refuses results that are not plain JSON or are too large", async () => {
      const small = new IsolatePool({
        allowLoopbackFetch: false,
        timeoutMs: 1000,
        maxResultBytes: 64 * 1024,
      });
      try {
        const p = small.program("t/results", "function f() {}");
        for (const code of [
          "() => 1",
          "({ a: { b: function () {} } })",
          "(() => { const a = { n: 1 }; a.self = a; return a })()",
          "Symbol('s')",
          "({ big: 10n })",
          "'x'.repeat(70 * 1024)",
          "'é'.repeat(40 * 1024)",
        ]) {
          const e = await rejection(p.evaluate(code));
          expect(e.kind, code).to.equal("result");
        }
        // the isolate is still fine afterwards
        expect(await p.evaluate("[1, 'two', { three: null }]")).to.deep.equal([1, "two", { three: null }]);
      } finally {
        await small.close();
      }
    });
  });

  describe("errors thrown by user code", () => {
    it("turns any thrown value into SandboxError(script) with a safe message", async () => {
      const p = pool.program("t/throw", "function f(code) { return eval(code) }");
      const cases: [string, RegExp][] = [
        ["throw 42", /non-Error value was thrown: 42/],
        ["throw {}", /non-Error object was thrown/],
        ["throw null", /non-Error value was thrown: null/],
        ["throw undefined", /non-Error value was thrown: undefined/],
        ["throw 'just text'", /just text/],
        ["throw new TypeError('bad type')", /^TypeError: bad type/],
        ["throw { message: 'like an error' }", /like an error/],
        ["throw { get message() { throw new Error('nope') } }", /unreadable value|non-Error object/],
        ["throw new Error('x'.repeat(5000))", /^Error: x+…?$/],
      ];
      for (const [code, pattern] of cases) {
        const e = await rejection(p.evaluate(code, {}, { kind: "body" }));
        expect(e.kind, code).to.equal("script");
        expect(e.message, code).to.match(pattern);
        expect(e.message.length, code).to.be.at.most(1001);
        expect(e.scriptError, code).to.have.keys(["name", "message"]);
      }
      const rejected = await rejection(p.evaluate("await Promise.reject(7)", {}, { kind: "body" }));
      expect(rejected.message).to.match(/non-Error value was thrown: 7/);
      const syntax = await rejection(p.evaluate("1 +"));
      expect(syntax.kind).to.equal("script");
      expect(syntax.message).to.match(/SyntaxError/);
      expect(await p.call("f", ["1 + 1"])).to.equal(2);
    });
  });

  describe("limits", () => {
    it("stops a synchronous infinite loop at the time limit and replaces the isolate", async () => {
      const p = pool.program(
        "t/loop",
        "var calls = 0; function spin() { calls++; while (true) {} } function count() { return ++calls }",
      );
      expect(await p.call("count")).to.equal(1);
      const error = await rejection(p.call("spin"));
      expect(error).to.be.instanceOf(SandboxTimeoutError);
      expect((error as SandboxTimeoutError).timeoutMs).to.equal(300);
      // fresh isolate: state starts over
      expect(await p.call("count")).to.equal(1);
      expect(pool.stats().disposed.timeout).to.equal(1);
    });

    it("stops code that spins after an await (host timer, not only isolated-vm's timeout)", async () => {
      const p = pool.program(
        "t/async-spin",
        "async function spin() { await new Promise((r) => setTimeout(r, 5)); while (true) {} } function ok() { return 'ok' }",
      );
      const { ms, error } = await timed(() => p.call("spin", [], { timeoutMs: 250 }));
      expect(error).to.be.instanceOf(SandboxTimeoutError);
      expect((error as SandboxTimeoutError).timeoutMs, "its own limit, not the pool's 300 ms").to.equal(250);
      expect(ms, "not before its limit").to.be.at.least(240);
      expect(pool.stats().disposed.timeout, "the spinning isolate was disposed").to.equal(1);
      expect(await p.call("ok")).to.equal("ok");
    });

    it("tells the CPU time a call spent in its isolate once, also when it is stopped at its time limit", async () => {
      const p = pool.program("t/cpu", "function spin() { while (true) {} } function ok() { return 1 }");
      const told: number[] = [];
      const onCpuTime = (ms: number) => told.push(ms);
      await p.call("ok", [], { onCpuTime });
      expect(told).to.have.length(1);
      const error = await rejection(p.call("spin", [], { onCpuTime }));
      expect(error).to.be.instanceOf(SandboxTimeoutError);
      expect(told).to.have.length(2);
      expect(told[1]).to.be.greaterThan(0);
    });

    it("charges the CPU time of loading an isolate to the call that waited for it, also when the load fails", async () => {
      const told: number[] = [];
      const onCpuTime = (ms: number) => told.push(ms);
      const spinning = pool.program("t/load-spin", "while (true) {}\nfunction f() { return 1 }");
      // Time enough to see the load fail (its own limit is 2 × 300 ms).
      const options = { onCpuTime, timeoutMs: 5000 };
      expect(await rejection(spinning.call("f", [], options))).to.be.instanceOf(SandboxError);
      expect(told).to.have.length(1);
      expect(told[0]).to.be.greaterThan(0);
      // The load failure is remembered for a while: later calls fail without a load, and are charged nothing.
      await rejection(spinning.call("f", [], options));
      expect(told[1]).to.equal(0);
    });

    it("stops a call that never settles", async () => {
      const p = pool.program("t/pending", "function wait() { return new Promise(() => {}) }");
      const error = await rejection(p.call("wait", [], { timeoutMs: 100 }));
      expect(error).to.be.instanceOf(SandboxTimeoutError);
      expect((error as SandboxTimeoutError).timeoutMs).to.equal(100);
    });

    it("disposes an isolate that runs out of memory and serves the next call from a fresh one", async () => {
      const p = pool.program(
        "t/oom",
        "function hog() { const a = []; while (true) a.push(new Array(100000).fill(a.length)); } function ok() { return 1 }",
      );
      const e = await rejection(p.call("hog", [], { timeoutMs: 10_000 }));
      expect(e.kind).to.equal("memory");
      expect(await p.call("ok")).to.equal(1);
      expect(pool.stats().disposed.memory).to.equal(1);
    });

    it("turns deep recursion into a script error without losing the isolate", async () => {
      const p = pool.program(
        "t/recursion",
        "var n = 0; function deep() { return deep() + 1 } function count() { return ++n }",
      );
      expect(await p.call("count")).to.equal(1);
      const e = await rejection(p.call("deep"));
      expect(e.kind).to.equal("script");
      expect(e.message).to.match(/RangeError: Maximum call stack/);
      expect(await p.call("count")).to.equal(2);
    });

    it("bounds setTimeout: count per call, capped delays, timers never outlive their call", async () => {
      const p = pool.program(
        "t/timers",
        "var fired = 0; function later() { setTimeout(() => { fired++ }, 50); return 'returned' } function count() { return fired }\n" +
          "function many() { for (let i = 0; i < 200; i++) setTimeout(() => {}, 1); return new Promise((r) => setTimeout(r, 20)) }",
      );
      expect(await p.evaluate("await new Promise((r) => setTimeout(() => r('done'), 10))")).to.equal("done");
      const cleared = await p.evaluate(
        "let hit = false; const id = setTimeout(() => { hit = true }, 5); clearTimeout(id); await new Promise((r) => setTimeout(r, 20)); return hit;",
        {},
        { kind: "body" },
      );
      expect(cleared).to.equal(false);
      expect(await p.call("later")).to.equal("returned");
      // A later call waits on a timer due after the first call's: had that one outlived its call, it would fire first.
      expect(
        await p.evaluate(
          "await new Promise((r) => setTimeout(r, 100)); return count();",
          {},
          { kind: "body" },
        ),
      ).to.equal(0);
      const { error } = await timed(() =>
        p.evaluate("await new Promise((r) => setTimeout(r, 60000))", {}, { kind: "body", timeoutMs: 200 }),
      );
      expect(error).to.be.instanceOf(SandboxTimeoutError);
      // Uncapped, the timer would outlast the call's limit (a timeout); capped, it fires long before.
      const capped = new IsolatePool({ allowLoopbackFetch: false, timeoutMs: 15_000, maxTimerDelayMs: 50 });
      try {
        const q = capped.program("t/timer-cap", "function f() {}");
        expect(await q.evaluate("await new Promise((r) => setTimeout(() => r('capped'), 600000))")).to.equal(
          "capped",
        );
      } finally {
        await capped.close();
      }
      // more than the per-call maximum (100)
      const tooMany = await rejection(p.call("many"));
      expect(tooMany.kind).to.equal("script");
      expect(tooMany.message).to.match(/more than 100 timers/);
    });

    it("reports load failures (syntax error, top-level throw, top-level loop) as SandboxError(load|timeout)", async () => {
      const syntax = await rejection(pool.program("t/syntax", "function (").call("f"));
      expect(syntax.kind).to.equal("load");
      expect(syntax.message).to.match(/does not compile/);
      const thrown = await rejection(pool.program("t/top-throw", "throw 42").call("f"));
      expect(thrown.kind).to.equal("load");
      expect(thrown.message).to.match(/42/);
      // The call's own limit is far beyond the load's (2 × 300 ms): the load's limit stops it.
      const loadsFailed = pool.stats().disposed["load failed"] ?? 0;
      const error = await rejection(
        pool.program("t/top-loop", "while (true) {}").call("f", [], { timeoutMs: 15_000 }),
      );
      expect(error).to.be.instanceOf(SandboxTimeoutError);
      expect(
        pool.stats().disposed["load failed"],
        "the load failed (at its own limit) before the call's ended",
      ).to.equal(loadsFailed + 1);
      // a failed load is remembered for a while: no new isolate per call
      const before = pool.stats().disposed["load failed"] ?? 0;
      await rejection(pool.get("t/syntax")!.call("f"));
      expect(pool.stats().disposed["load failed"] ?? 0).to.equal(before);
    });
  });

  describe("what sandboxed code can reach", () => {
    it("has no require, process, module system, WebAssembly or shared memory", async () => {
      const p = pool.program("t/globals", "function f() {}");
      const seen = await p.evaluate(
        "[typeof require, typeof process, typeof module, typeof global, typeof WebAssembly, typeof SharedArrayBuffer, typeof Atomics, typeof FinalizationRegistry, typeof fetch, typeof tessera]",
      );
      expect(seen).to.deep.equal(Array(10).fill("undefined"));
      const viaGlobal = await rejection(p.evaluate("globalThis.constructor.constructor('return process')()"));
      expect(viaGlobal.kind).to.equal("script");
      expect(viaGlobal.message).to.match(/process is not defined/);
      const viaFn = await rejection(p.evaluate("(function(){}).constructor('return require')()('fs')"));
      expect(viaFn.message).to.match(/require is not defined/);
      const imported = await rejection(p.evaluate("await import('fs')", {}, { kind: "body" }));
      expect(imported.kind).to.equal("script");
    });

    it("has a bounded console that goes to the host log at debug level", async () => {
      const logger = memoryLogger();
      const logged = new IsolatePool({ allowLoopbackFetch: false, logger });
      try {
        const p = logged.program(
          "t/console",
          "function f() { for (let i = 0; i < 500; i++) console.log('line', i, { i }); console.error('bad'); return 1 }",
        );
        expect(await p.call("f")).to.equal(1);
        const consoleLines = () => logger.entries.filter((e) => e.obj.source === "sandbox console");
        await until(() => consoleLines().length >= 100, "100 console lines logged");
        const lines = consoleLines();
        expect(lines.length).to.equal(100);
        expect(lines.every((e) => e.level === "debug")).to.equal(true);
        expect(lines[0]!.msg).to.equal('line 0 {"i":0}');
      } finally {
        await logged.close();
      }
    });
  });

  describe("host functions", () => {
    it("exposes async and sync host functions under their dotted names, with per-call context", async () => {
      const seen: unknown[] = [];
      const p = pool.program(
        "t/host",
        "async function go(x) { const r = await svc.lookup(x); return [r, logicContext.insert('t', { a: x })] }",
        {
          hostFunctions: {
            "svc.lookup": async (args, info) => {
              seen.push(info.context);
              return { found: args[0] };
            },
            "logicContext.insert": { fn: (args) => ({ table: args[0], row: args[1] }), sync: true },
          },
        },
      );
      expect(await p.call("go", [7], { context: "tx-1" })).to.deep.equal([
        { found: 7 },
        { table: "t", row: { a: 7 } },
      ]);
      expect(seen).to.deep.equal(["tx-1"]);
      // a binding named like a host namespace gets its functions merged in
      expect(
        await p.evaluate("logicContext.verb + ':' + logicContext.insert('x', 1).table", {
          logicContext: { verb: "INSERT" },
        }),
      ).to.equal("INSERT:x");
      // namespaces are frozen and cannot be replaced
      expect(
        await p.evaluate("(() => { svc.lookup = null; svc = null; return typeof svc.lookup })()"),
      ).to.equal("function");
    });

    it("passes SandboxHostError messages to the script and hides other host errors", async () => {
      const logger = memoryLogger();
      const logged = new IsolatePool({ allowLoopbackFetch: false, logger });
      try {
        const p = logged.program(
          "t/host-errors",
          "async function go(name) { try { await h[name](); return 'no error' } catch (e) { return e.name + ': ' + e.message } }",
          {
            hostFunctions: {
              "h.refuse": () => {
                throw new SandboxHostError("not for you");
              },
              "h.crash": async () => {
                throw new Error("secret internal detail");
              },
            },
          },
        );
        expect(await p.call("go", ["refuse"])).to.equal("TesseraHostError: not for you");
        expect(await p.call("go", ["crash"])).to.equal("TesseraHostError: Host function h.crash failed");
        // Logged as a fingerprint: a store error's message can quote the values of its query.
        expect(logger.text()).to.contain("h.crash").and.contain(fingerprint("secret internal detail"));
        expect(logger.text()).to.not.contain("secret internal detail");
      } finally {
        await logged.close();
      }
    });

    it("never delivers a host answer after the call ended", async () => {
      let resolveLate: ((v: unknown) => void) | undefined;
      const p = pool.program(
        "t/late",
        "var late = 'never'; function start() { svc.slow().then(() => { late = 'woke up'; while (true) {} }); return 'started' } function check() { return late }",
        {
          hostFunctions: {
            "svc.slow": () =>
              new Promise((resolve) => {
                resolveLate = resolve;
              }),
          },
        },
      );
      expect(await p.call("start")).to.equal("started");
      resolveLate?.("now");
      // The host's answer has been handled (delivered or dropped) before the next call reaches the isolate.
      await turnOfEventLoop();
      // Delivered, it would have set `late` and spun: this call would see "woke up" or time out.
      expect(await p.call("check")).to.equal("never");
      expect(pool.stats().disposed.timeout ?? 0).to.equal(0);
    });

    it("updates host-function implementations in place when only they change", async () => {
      const a = pool.program("t/swap", "async function f() { return await svc.v() }", {
        hostFunctions: { "svc.v": () => "one" },
      });
      expect(await a.call("f")).to.equal("one");
      const b = pool.program("t/swap", "async function f() { return await svc.v() }", {
        hostFunctions: { "svc.v": () => "two" },
      });
      expect(b).to.equal(a);
      expect(await b.call("f")).to.equal("two");
    });
  });

  describe("pooling", () => {
    it("reuses a warm isolate: program state persists between calls", async () => {
      const p = pool.program("t/warm", "var n = 0; function inc() { return ++n }");
      const results: unknown[] = [];
      for (let i = 0; i < 20; i++) results.push(await p.call("inc"));
      expect(results).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(pool.stats().isolates).to.equal(1);
      expect(pool.stats().disposed).to.deep.equal({});
    });

    it("runs at most maxIsolatesPerProject calls of one program at once; others queue", async () => {
      const one = new IsolatePool({ allowLoopbackFetch: false, timeoutMs: 2000, maxIsolatesPerProject: 1 });
      try {
        // The isolate counts the calls inside it at once; each yields to the event loop while inside.
        const p = one.program(
          "t/serial",
          "let inside = 0, most = 0; async function slow(id) { inside++; most = Math.max(most, inside); await new Promise((r) => setTimeout(r, 20)); inside--; return id } function peak() { return most }",
        );
        const results = await Promise.all([1, 2, 3].map((i) => p.call("slow", [i])));
        expect(results).to.deep.equal([1, 2, 3]);
        expect(await p.call("peak"), "calls inside the one isolate at once").to.equal(1);
        expect(one.stats().isolates).to.equal(1);
      } finally {
        await one.close();
      }
      const two = new IsolatePool({ allowLoopbackFetch: false, timeoutMs: 2000, maxIsolatesPerProject: 2 });
      try {
        const p = two.program(
          "t/parallel",
          "async function slow(id) { await new Promise((r) => setTimeout(r, 100)); return id }",
        );
        await Promise.all([1, 2, 3, 4].map((i) => p.call("slow", [i])));
        expect(two.stats().isolates).to.equal(2);
      } finally {
        await two.close();
      }
    });

    it("times out calls that wait too long for an isolate and refuses calls beyond the queue", async () => {
      const tight = new IsolatePool({
        allowLoopbackFetch: false,
        timeoutMs: 100,
        maxIsolatesPerProject: 1,
        maxQueuedCallsPerProgram: 2,
      });
      try {
        // The first call holds the only isolate until the test lets it go, after the others have ended.
        let release: (() => void) | undefined;
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        const p = tight.program("t/queue", "async function hold() { await gate.wait(); return 1 }", {
          hostFunctions: { "gate.wait": () => held },
        });
        await p.warm();
        const first = p.call("hold", [], { timeoutMs: 60_000 });
        await until(() => tight.stats().busy === 1, "the first call in the isolate");
        const queued = [2, 3].map(() => rejection(p.call("hold")));
        await until(() => tight.stats().queued === 2, "two calls queued");
        const refused = await rejection(p.call("hold"));
        expect(refused.kind, "beyond the queue").to.equal("unavailable");
        for (const e of await Promise.all(queued)) {
          expect(e).to.be.instanceOf(SandboxTimeoutError);
          expect(e.message).to.match(/No isolate became free/);
        }
        release?.();
        expect(await first).to.equal(1);
      } finally {
        await tight.close();
      }
    });

    it("rebuilds when the code changes, and retires the old program's isolates", async () => {
      const first = pool.program("t/rebuild", "var v = 'v1'; function version() { return v }");
      expect(await first.call("version")).to.equal("v1");
      expect(pool.program("t/rebuild", "var v = 'v1'; function version() { return v }")).to.equal(first);
      const second = pool.program("t/rebuild", "var v = 'v2'; function version() { return v }");
      expect(second).to.not.equal(first);
      expect(second.hash).to.not.equal(first.hash);
      expect(first.isRetired).to.equal(true);
      expect(await second.call("version")).to.equal("v2");
      expect(pool.get("t/rebuild")).to.equal(second);
      await until(() => pool.stats().disposed.retired === 1, "the old isolate disposed");
      expect(pool.stats().isolates).to.equal(1);
      // a handle to the retired program still answers (with a throw-away isolate)
      expect(await first.call("version")).to.equal("v1");
    });

    it("recycles an isolate whose heap grew past recycleAfterHeapMb", async () => {
      const recycling = new IsolatePool({
        allowLoopbackFetch: false,
        timeoutMs: 2000,
        recycleAfterHeapMb: 4,
      });
      try {
        const p = recycling.program(
          "t/heap",
          "var keep = []; var n = 0; function grow() { for (let i = 0; i < 50; i++) keep.push(new Array(20000).fill(i)); return ++n } function count() { return ++n }",
        );
        expect(await p.call("count")).to.equal(1);
        expect(await p.call("grow")).to.equal(2);
        await until(() => recycling.stats().disposed.heap === 1, "the grown isolate recycled");
        expect(await p.call("count")).to.equal(1);
      } finally {
        await recycling.close();
      }
    });

    it("evicts the least recently used idle isolate at maxIsolates", async () => {
      // Idle isolates stay far longer than the test (no idle disposal can interfere).
      const small = new IsolatePool({
        allowLoopbackFetch: false,
        idleIsolateTtlMs: 3_600_000,
        maxIsolates: 2,
      });
      try {
        const a = small.program("t/a", "var n = 0; function f() { return 'a' + ++n }");
        const b = small.program("t/b", "var n = 0; function f() { return 'b' + ++n }");
        const c = small.program("t/c", "var n = 0; function f() { return 'c' + ++n }");
        // An isolate back from a call is checked before it is idle (and can be evicted) again.
        const call = async (p: typeof a) => {
          const value = await p.call("f");
          await until(() => small.stats().idle === small.stats().isolates, "isolates idle again");
          return value;
        };
        expect(await call(a)).to.equal("a1");
        expect(await call(b)).to.equal("b1");
        expect(await call(c)).to.equal("c1");
        expect(small.stats().isolates).to.equal(2);
        expect(small.stats().disposed).to.deep.equal({ evicted: 1 });
        expect(await call(b), "b's isolate was kept").to.equal("b2");
        expect(await call(a), "a's isolate was the one evicted").to.equal("a1");
      } finally {
        await small.close();
      }
    });

    it("disposes idle isolates after idleIsolateTtlMs", async () => {
      const short = new IsolatePool({ allowLoopbackFetch: false, idleIsolateTtlMs: 200 });
      try {
        for (const key of ["t/a", "t/b"]) await short.program(key, "function f() { return 1 }").call("f");
        await until(() => short.stats().isolates === 0, "idle isolates disposed");
        expect(short.stats().disposed).to.deep.equal({ idle: 2 });
      } finally {
        await short.close();
      }
    });

    it("drop() and close() dispose everything; later calls fail as unavailable", async () => {
      const p = pool.program("t/close", "function f() { return 1 }");
      await p.call("f");
      pool.drop("t/close");
      expect(pool.get("t/close")).to.equal(undefined);
      await until(() => pool.stats().isolates === 0, "the dropped program's isolate disposed");
      let started: (() => void) | undefined;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const q = pool.program(
        "t/close2",
        "async function f() { await svc.started(); await new Promise(() => {}) }",
        {
          hostFunctions: { "svc.started": () => started?.() },
        },
      );
      const pending = q.call("f", [], { timeoutMs: 60_000 });
      await running;
      await pool.close();
      expect((await rejection(pending)).kind).to.be.oneOf(["crashed", "unavailable"]);
      expect((await rejection(q.call("f"))).kind).to.equal("unavailable");
      expect(() => pool.program("t/after", "1")).to.throw(SandboxError);
    });
  });
});
