/**
 * Hostile custom providers: each misbehaviour is a clean failed login within
 * its limit, the process stays up, and other programs keep answering.
 */
import { readFileSync } from "node:fs";
import { expect } from "chai";
import {
  type CustomProviderOptions,
  createCustomProvider,
} from "../../../services/data/src/providers/custom-provider.ts";
import type { ProviderVerdict } from "../../../services/data/src/providers/provider.ts";
import { ProcessSandboxPool } from "../../../services/data/src/sandbox/index.ts";
import { fingerprint } from "../../../shared/loggable-error.ts";
import { memoryLogger, timed } from "../../unit/sandbox/support.ts";

const TIMEOUT_MS = 500;
const GENEROUS_TIMEOUT_MS = 10_000;
const secretWord = readFileSync(
  new URL("../../../examples/providers/secret-word/secret-word.js", import.meta.url),
  "utf8",
);

/** A provider library whose authenticate body is `body` (`async` unless told otherwise). */
function library(body: string, { async = true } = {}): string {
  return `function hostileCreate() {
  return {
    getLoginInfo: function () { return { fields: [{ name: "username", display: "User", type: "text" }], links: [] }; },
    authenticate: ${async ? "async " : ""}function (payload, enablePasswordChange) {
${body}
    }
  };
}`;
}

describe("hostile custom providers", function () {
  this.timeout(30_000);
  let pool: ProcessSandboxPool;
  let logger: ReturnType<typeof memoryLogger>;
  let seq = 0;

  beforeEach(async () => {
    pool = new ProcessSandboxPool({ allowLoopbackFetch: false, timeoutMs: TIMEOUT_MS });
    await pool.ready();
    logger = memoryLogger();
  });

  afterEach(async () => {
    await pool.close();
  });

  function provider(code: string, over: Partial<CustomProviderOptions> = {}) {
    return createCustomProvider({
      pool,
      programKey: `hostile/p${++seq}/auth`,
      libraryCode: code,
      createFunction: "hostileCreate",
      config: {},
      projectRoles: ["Full access"],
      exposeProviderMessages: false,
      allowedHosts: [],
      logger,
      ...over,
    });
  }

  async function login(code: string, over: Partial<CustomProviderOptions> = {}) {
    const p = provider(code, over);
    const outcome = await timed(() =>
      p.authenticate({ payload: { username: "u", password: "secret-pw" }, enablePasswordChange: false }),
    );
    expect(outcome.error, "authenticate must not throw").to.equal(undefined);
    return { verdict: outcome.value as ProviderVerdict, ms: outcome.ms, provider: p };
  }

  /**
   * A failed login, for the `reason` logged (which limit or error ended it), with the sandbox
   * process still trusted: a call its process did not answer would have ended with the grace
   * period and the process replaced as unresponsive.
   */
  async function expectCleanFailure(
    code: string,
    reason: RegExp,
    opts: { async?: boolean; timeoutMs?: number } = {},
  ) {
    // Unless the time limit is what the case is about, it is far beyond what the case needs on a loaded machine.
    const { verdict, provider: p } = await login(library(code, opts), {
      timeoutMs: opts.timeoutMs ?? GENEROUS_TIMEOUT_MS,
    });
    expect(verdict).to.deep.equal({ ok: false, reason: "refused" });
    expect(pool.stats().processes?.restarts.unresponsive ?? 0, "answered by its process").to.equal(0);
    expect(logger.text()).to.match(reason);
    expect(logger.text()).to.not.contain("secret-pw");
    expect(logger.text()).to.match(/"fingerprint":"[0-9a-f]{12}"/);
    return p;
  }

  it("infinite loop: fails at the time limit", async () => {
    await expectCleanFailure("while (true) {}", /did not finish within 500 ms|time limit/, {
      async: false,
      timeoutMs: TIMEOUT_MS,
    });
  });

  it("while(true) inside an async function after an await: fails at the time limit", async () => {
    await expectCleanFailure(
      "await new Promise((r) => setTimeout(r, 20)); while (true) {}",
      /did not finish within 500 ms/,
      { timeoutMs: TIMEOUT_MS },
    );
  });

  it("a promise that never settles: fails at the time limit", async () => {
    await expectCleanFailure("await new Promise(() => {});", /did not finish within 500 ms/, {
      timeoutMs: TIMEOUT_MS,
    });
  });

  it("unbounded allocation: fails on the memory limit, the next login gets a fresh isolate", async () => {
    const p = await expectCleanFailure(
      "const hog = []; while (true) hog.push(new Array(1e5).fill('x' + hog.length));",
      /ran out of memory/,
      // a generous time limit, so that the memory limit is what stops it
      { timeoutMs: 10_000 },
    );
    expect(pool.stats().disposed.memory).to.equal(1);
    expect(await p.getLoginInfo()).to.have.property("fields");
  });

  it("large allocations at once (typed arrays, strings): fail cleanly", async () => {
    await expectCleanFailure(
      "const b = new ArrayBuffer(512 * 1024 * 1024); return { roleNames: [] };",
      /"kind":"(memory|script)"/,
      { timeoutMs: 10_000 },
    );
    await expectCleanFailure("let s = 'x'; for (;;) s += s; ", /"kind":"(memory|script)"/);
  });

  it("deep recursion: a script error", async () => {
    await expectCleanFailure(
      "function f(n) { return f(n + 1) + 1 } return f(0);",
      /"kind":"script"/,
      // a generous time limit, so that the stack limit is what stops it on a loaded machine too
      { timeoutMs: 10_000 },
    );
  });

  it("throwing non-errors: script errors", async () => {
    await expectCleanFailure("throw 42;", /"kind":"script"/);
    await expectCleanFailure("throw {};", /"kind":"script"/);
    await expectCleanFailure("throw null;", /"kind":"script"/);
    await expectCleanFailure("return Promise.reject('nope');", /"kind":"script"/);
    await expectCleanFailure(
      "throw { toString() { while (true) {} } };",
      /"kind":"script"|time limit|within/,
      { timeoutMs: TIMEOUT_MS },
    );
  });

  it("cyclic, huge, function and odd results: clean failures", async () => {
    await expectCleanFailure("const r = { roleNames: [] }; r.self = r; return r;", /"kind":"result"/);
    await expectCleanFailure(
      "return { roleNames: [], userData: { blob: 'x'.repeat(2 * 1024 * 1024) } };",
      /"kind":"result"/,
    );
    await expectCleanFailure("return { roleNames: [], userData: { f: function () {} } };", /"kind":"result"/);
    await expectCleanFailure("return function () {};", /"kind":"result"/);
    await expectCleanFailure("return { roleNames: [10n] };", /"kind":"result"/);
    await expectCleanFailure("return 'Full access';", /not an object/);
    await expectCleanFailure("return { roleNames: 'Full access' };", /roleNames/);
    await expectCleanFailure(
      "return { roleNames: ['Full access'], userIdentifier: { admin: true } };",
      /userIdentifier/,
    );
  });

  it("a result cannot pollute host prototypes", async () => {
    const { verdict } = await login(
      library(
        `return JSON.parse('{"__proto__": {"polluted": "yes"}, "roleNames": ["Full access"], "userData": {"__proto__": {"polluted": "yes"}}}');`,
      ),
    );
    expect(verdict.ok).to.equal(true);
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect(Object.prototype).to.not.have.property("polluted");
  });

  it("require, process and Function-constructor escapes: nothing to reach", async () => {
    const escapes = [
      "const fs = require('fs'); return { roleNames: ['Full access'], userData: { d: fs.readdirSync('/') } };",
      "return { roleNames: ['Full access'], userData: { env: process.env } };",
      "const p = globalThis.constructor.constructor('return process')(); return { roleNames: ['Full access'], userData: { pid: p.pid } };",
      "const p = (async function(){}).constructor('return process')(); return { roleNames: ['Full access'], userData: { pid: (await p).pid } };",
      "const m = await import('node:fs'); return { roleNames: ['Full access'], userData: { m: Object.keys(m) } };",
      "return { roleNames: ['Full access'], userData: { k: Object.keys(this) } }.userData.k.includes('process') ? { roleNames: ['Full access'] } : { errorMessage: 'no' };",
    ];
    for (const code of escapes) {
      const { verdict } = await login(library(code));
      expect(verdict.ok, code).to.equal(false);
    }
    // Logged as fingerprints of what the code threw (the text could quote credentials).
    for (const thrown of [
      "ReferenceError: require is not defined",
      "ReferenceError: process is not defined",
    ]) {
      expect(logger.text()).to.contain(`"fingerprint":"${fingerprint(thrown)}"`);
      expect(logger.text()).to.not.contain(thrown);
    }
  });

  it("fetching private, loopback and metadata addresses is refused without allowLoopbackFetch", async () => {
    const targets = [
      "http://127.0.0.1/",
      "http://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://0.0.0.0/",
      "http://2130706433/",
      "http://localhost/",
    ];
    const allowedHosts = [
      "127.0.0.1",
      "10.0.0.1",
      "169.254.169.254",
      "[::1]",
      "::ffff:7f00:1",
      "0.0.0.0",
      "localhost",
    ];
    for (const url of targets) {
      const code = `try { await tessera.fetchJson(${JSON.stringify(url)}); return { roleNames: ['Full access'] }; } catch (e) { return { errorMessage: e.name + ': ' + e.message }; }`;
      const { verdict } = await login(library(code), { allowedHosts, exposeProviderMessages: true });
      expect(verdict.ok, url).to.equal(false);
      // Refused by the address check, before any connection (not a connection error or timeout).
      expect(!verdict.ok && verdict.reason === "providerMessage" && verdict.message, url).to.match(
        /^TesseraHostError: fetchJson: .* resolves to a (loopback|private|link-local|unspecified) address, which is not allowed/,
      );
    }
    // uncaught, it is just a failed login
    const { verdict } = await login(
      library("await tessera.fetchJson('http://169.254.169.254/'); return { roleNames: [] };"),
      {
        allowedHosts,
      },
    );
    expect(verdict).to.deep.equal({ ok: false, reason: "refused" });
  });

  it("fetching hosts outside the allow-list or other schemes is refused", async () => {
    for (const url of [
      "https://example.com/",
      "file:///etc/passwd",
      "ftp://example.com/",
      "http://user:pw@example.com/",
    ]) {
      const code = `try { await tessera.fetchJson(${JSON.stringify(url)}); return { roleNames: [] }; } catch (e) { return { errorMessage: e.message }; }`;
      const { verdict } = await login(library(code), {
        allowedHosts: ["example.org"],
        exposeProviderMessages: true,
      });
      expect(!verdict.ok && verdict.reason === "providerMessage" && verdict.message, url).to.match(
        /allowed hosts|only http and https|credentials in the URL/,
      );
    }
  });

  it("work left behind by a call never runs later (timers, host answers)", async () => {
    const code = library(
      "if (payload.username === 'plant') { setTimeout(() => { while (true) {} }, 10); tessera.fetchJson('http://10.0.0.1/').catch(() => { while (true) {} }); return { errorMessage: 'planted' }; }\n" +
        "if (payload.username === 'wait') await new Promise((r) => setTimeout(r, 100));\n" +
        "return { roleNames: ['Full access'] };",
    );
    const p = provider(code, { allowedHosts: ["10.0.0.1"] });
    expect(
      (await p.authenticate({ payload: { username: "plant" }, enablePasswordChange: false })).ok,
    ).to.equal(false);
    // The next call waits on its own timer, due after the planted one: planted work that ran would
    // run first and spin this call into its time limit.
    const next = await timed(() =>
      p.authenticate({ payload: { username: "wait" }, enablePasswordChange: false }),
    );
    expect((next.value as ProviderVerdict).ok).to.equal(true);
    expect(pool.stats().disposed.timeout ?? 0).to.equal(0);
  });

  it("a broken library (syntax error, missing create function, throwing create) fails logins cleanly", async () => {
    for (const [code, createFunction, reason] of [
      ["function hostileCreate( {", "hostileCreate", /"kind":"load"/],
      ["function other() {}", "hostileCreate", /"kind":"script"/],
      ["function hostileCreate() { throw new Error('create failed') }", "hostileCreate", /"kind":"script"/],
      ["function hostileCreate() { return 7 }", "hostileCreate", /"kind":"script"/],
      ["function hostileCreate() { return {} }", "hostileCreate", /"kind":"script"/],
    ] as const) {
      const { verdict } = await login(code, { createFunction });
      expect(verdict, code).to.deep.equal({ ok: false, reason: "refused" });
      // Logged by kind and fingerprint: the library's own text (it embeds the configuration) is not.
      expect(logger.text(), code).to.match(reason);
      expect(logger.text(), code).to.match(/"provider":"hostileCreate"/);
    }
    expect(() => provider("function x() {}", { createFunction: "x(); process" })).to.throw(TypeError);
  });

  it("other programs keep answering while hostile ones spin", async () => {
    const healthyPool = new ProcessSandboxPool({ allowLoopbackFetch: false, timeoutMs: 1000 });
    try {
      await healthyPool.ready();
      const healthy = createCustomProvider({
        pool: healthyPool,
        programKey: "good/project/auth",
        libraryCode: secretWord,
        createFunction: "secretWordCreate",
        config: { secretWord: "w" },
        projectRoles: ["Full access"],
        exposeProviderMessages: false,
        allowedHosts: [],
        logger,
      });
      const spinner = createCustomProvider({
        pool: healthyPool,
        programKey: "evil/project/auth",
        libraryCode: library("await null; while (true) {}"),
        createFunction: "hostileCreate",
        config: {},
        projectRoles: [],
        exposeProviderMessages: false,
        allowedHosts: [],
        logger,
      });
      await healthy.warm();
      await spinner.warm();
      // two spinning calls (the hostile program's maximum) and a stream of healthy logins meanwhile
      const hostile = [1, 2].map(() =>
        timed(() => spinner.authenticate({ payload: {}, enablePasswordChange: false })),
      );
      // Healthy logins go on while the spinners still run: the condition, not a latency
      // (figures of the same situation are make bench's `fair-share` scenario).
      let spinning = true;
      const settled = Promise.all(hostile).finally(() => {
        spinning = false;
      });
      let answeredWhileSpinning = 0;
      while (spinning) {
        const t = await timed(() =>
          healthy.authenticate({ payload: { username: "a", password: "w" }, enablePasswordChange: false }),
        );
        expect((t.value as ProviderVerdict).ok).to.equal(true);
        if (spinning) answeredWhileSpinning++;
      }
      const outcomes = await settled;
      for (const o of outcomes) {
        expect(o.value).to.deep.equal({ ok: false, reason: "refused" });
        // Cut by the time limit (1 s), never before it.
        expect(o.ms).to.be.at.least(900);
      }
      expect(answeredWhileSpinning, "healthy logins answered while the hostile calls spun").to.be.at.least(3);
    } finally {
      await healthyPool.close();
    }
  });
});
