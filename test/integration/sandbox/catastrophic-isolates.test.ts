/**
 * A hostile provider whose isolate has a catastrophic error (a Map grown until
 * its heap cannot be collected below the limit: isolated-vm then never settles
 * the call and keeps the isolate's thread and memory for as long as the
 * process lives) against a real data-service process, as deployed:
 * - each such login fails at the catastrophic error (not at its deadline), and
 *   nothing accumulates: the resident memory and threads of the service plus
 *   its sandbox processes come back;
 * - another tenant's provider, served by the same sandbox process, answers
 *   every login throughout;
 * - SIGTERM afterwards exits without waiting out the drain time and leaves no
 *   sandbox process behind.
 * Conditions, not timings: the test waits until the footprint has come back (or
 * gives up far beyond any loaded machine); the time limits that could be
 * confused are far apart. Figures: `make bench`'s `catastrophic-isolates`.
 */
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { CATASTROPHIC_PROVIDER } from "../../fixtures/catastrophic-provider.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import {
  type DataProcess,
  isRunning,
  rssBytes,
  sandboxProcessPids,
  startDataProcess,
} from "../../support/data-process.ts";
import { adminClient, call } from "../../support/http.ts";

const HOSTILE_CALLS = 50;
const TIMEOUT_MS = 10_000;
/** Far beyond the guard below: a shutdown that waited out the drain time could not pass. */
const GRACE_MS = 600_000;
const EXIT_GUARD_MS = 60_000;
const MB = 1024 * 1024;
/** How long the test waits for the footprint to come back before calling it a leak. */
const SETTLE_GUARD_MS = 60_000;

const secretWord = readFileSync(
  new URL("../../../examples/providers/secret-word/secret-word.js", import.meta.url),
  "utf8",
);

function threads(pid: number): number {
  try {
    return Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The service and its sandbox processes: resident bytes, threads, sandbox pids. */
function footprint(pid: number): { bytes: number; threads: number; sandboxes: number[] } {
  const sandboxes = sandboxProcessPids(pid);
  const all = [pid, ...sandboxes];
  return {
    bytes: all.reduce((sum, p) => sum + rssBytes(p), 0),
    threads: all.reduce((sum, p) => sum + threads(p), 0),
    sandboxes,
  };
}

/** Waits until `condition()` holds; false when it still does not after `ms`. */
async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** A counter of the service's /metrics by one label's value (0 when absent). */
function counter(metrics: string, name: string, label: string, value: string): number {
  const line = metrics.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(`${label}="${value}"`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

describe("catastrophic sandbox isolates in a real data service", function () {
  this.timeout(300_000);
  let service: DataProcess;

  before(async () => {
    // One sandbox process, so that the other tenant shares it with the hostile one.
    service = await startDataProcess({
      SANDBOX_PROCESSES: "1",
      SANDBOX_MEMORY_MB: "8",
      SANDBOX_TIMEOUT_MS: String(TIMEOUT_MS),
      SHUTDOWN_GRACE_MS: String(GRACE_MS),
      // Not under test here: each account's CPU share of the sandbox, which a loaded machine would spend.
      SANDBOX_ACCOUNT_CPU_MS: "3600000",
    });
    const admin = adminClient(service.base, service.adminToken);
    for (const [account, library, createFunction, code, config] of [
      ["evil", "hog", "hogCreate", CATASTROPHIC_PROVIDER, {}],
      ["good", "word", "secretWordCreate", secretWord, { secretWord: "open sesame" }],
    ] as const) {
      await admin.putAccount(account);
      const definition = demoProject({
        authentication: { provider: "custom", library, createFunction, config },
        libraries: { [library]: { code } },
      });
      expect((await admin.putProject(account, "p", definition)).status).to.equal(201);
    }
  });

  after(() => service?.cleanup());

  async function login(account: string, payload: Record<string, unknown>) {
    const reply = await call(
      service.base,
      "POST",
      `/internal/v1/accounts/${account}/projects/p/authenticate`,
      {
        body: { version: "v1", payload, enablePasswordChange: false },
        headers: { authorization: `Bearer ${service.serviceToken}` },
      },
    );
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    return { ok: reply.body.verdict.ok as boolean };
  }

  const metrics = async () => (await call(service.base, "GET", "/metrics")).body as string;

  /** The footprint once the replaced sandbox processes are gone and the fresh one serves the other tenant. */
  async function settledFootprint() {
    expect(
      await waitFor(() => footprint(service.pid).sandboxes.length <= 1, SETTLE_GUARD_MS),
      "replaced sandbox processes gone",
    ).to.equal(true);
    expect((await friendly()).ok).to.equal(true);
    return footprint(service.pid);
  }

  const hostile = () => login("evil", { username: "mallory" });
  const friendly = () => login("good", { username: "alice", password: "open sesame" });

  it(`serves ${HOSTILE_CALLS} catastrophic calls: each fails at its catastrophic error, nothing accumulates, the other tenant answers throughout`, async () => {
    // Warm-up: both programs loaded, a few restarts behind us, allocators at their working size.
    for (let i = 0; i < 3; i++) {
      expect((await friendly()).ok).to.equal(true);
      expect((await hostile()).ok).to.equal(false);
    }
    const before = await settledFootprint();
    const calls = await metrics();

    let hostileDone = false;
    const friendlyLogins = (async () => {
      let count = 0;
      while (!hostileDone) {
        const outcome = await friendly();
        expect(outcome.ok, `friendly login ${count}`).to.equal(true);
        count++;
      }
      return count;
    })();
    try {
      for (let i = 0; i < HOSTILE_CALLS; i++) {
        const outcome = await hostile();
        expect(outcome.ok).to.equal(false);
      }
    } finally {
      hostileDone = true;
    }
    expect(await friendlyLogins).to.be.above(0);

    await settledFootprint();
    // Nothing accumulates: the footprint comes back (the condition is awaited, allocators may take a moment).
    const mb = (bytes: number) => Math.round(bytes / MB);
    let after = footprint(service.pid);
    const cameBack = await waitFor(() => {
      after = footprint(service.pid);
      return after.bytes - before.bytes < 50 * MB && after.threads <= before.threads + 2;
    }, SETTLE_GUARD_MS);
    expect(
      cameBack,
      `resident memory ${mb(before.bytes)} MB -> ${mb(after.bytes)} MB, threads ${before.threads} -> ${after.threads}`,
    ).to.equal(true);

    // Each failed at its catastrophic error, none at its deadline (isolated-vm never settles such a call by itself).
    const now = await metrics();
    const delta = (name: string, label: string, value: string) =>
      counter(now, name, label, value) - counter(calls, name, label, value);
    expect(delta("tessera_sandbox_calls_total", "outcome", "memory"), "calls failed by memory").to.equal(
      HOSTILE_CALLS,
    );
    expect(delta("tessera_sandbox_calls_total", "outcome", "timeout"), "calls failed by deadline").to.equal(
      0,
    );
    expect(delta("tessera_sandbox_process_restarts_total", "reason", "catastrophic")).to.equal(HOSTILE_CALLS);
    expect(delta("tessera_sandbox_process_restarts_total", "reason", "unresponsive")).to.equal(0);
    expect(after.sandboxes, "one sandbox process, a fresh one").to.have.length(1);
    expect(after.sandboxes[0]).to.not.equal(before.sandboxes[0]);
  });

  it("SIGTERM after such calls: exits without waiting out the drain time, no sandbox process left", async () => {
    const sandboxes = sandboxProcessPids(service.pid);
    expect((await hostile()).ok).to.equal(false);
    expect((await friendly()).ok).to.equal(true);
    const all = [...sandboxes, ...sandboxProcessPids(service.pid)];
    service.child.kill("SIGTERM");
    let guard: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      service.exited,
      new Promise<"still running">((r) => {
        guard = setTimeout(() => r("still running"), EXIT_GUARD_MS);
      }),
    ]);
    clearTimeout(guard);
    // The drain time (GRACE_MS) is ten times the guard: it exited by itself, having waited for nothing.
    expect(code).to.equal(0);
    expect(all, "sandbox processes before SIGTERM").to.have.length.above(0);
    expect(all.filter(isRunning), "sandbox processes still running").to.deep.equal([]);
  });
});
