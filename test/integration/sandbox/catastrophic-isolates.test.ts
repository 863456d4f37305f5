/**
 * A hostile provider whose isolate has a catastrophic error (a Map grown until
 * its heap cannot be collected below the limit: isolated-vm then never settles
 * the call and keeps the isolate's thread and memory for as long as the
 * process lives) against a real data-service process, as deployed:
 * - each such login fails promptly, and nothing accumulates: the resident
 *   memory and threads of the service plus its sandbox processes come back;
 * - another tenant's provider, served by the same sandbox process, answers
 *   every login throughout;
 * - SIGTERM afterwards exits within the drain time and leaves no sandbox
 *   process behind.
 */
import { readFileSync } from "node:fs";
import { expect } from "chai";
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
const GRACE_MS = 5000;
const MB = 1024 * 1024;

const HOG = `function hogCreate() {
  return {
    authenticate: function () {
      const m = new Map();
      let i = 0;
      while (true) { m.set(i, "x" + i); i++; }
    },
  };
}`;

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

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!condition() && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
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
    });
    const admin = adminClient(service.base, service.adminToken);
    for (const [account, library, createFunction, code, config] of [
      ["evil", "hog", "hogCreate", HOG, {}],
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
    const started = performance.now();
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
    return { ok: reply.body.verdict.ok as boolean, ms: performance.now() - started };
  }

  const hostile = () => login("evil", { username: "mallory" });
  const friendly = () => login("good", { username: "alice", password: "open sesame" });

  it(`serves ${HOSTILE_CALLS} catastrophic calls: each fails promptly, nothing accumulates, the other tenant answers throughout`, async () => {
    // Warm-up: both programs loaded, a few restarts behind us, allocators at their working size.
    for (let i = 0; i < 3; i++) {
      expect((await friendly()).ok).to.equal(true);
      expect((await hostile()).ok).to.equal(false);
    }
    expect((await friendly()).ok).to.equal(true);
    await waitFor(() => footprint(service.pid).sandboxes.length <= 1, 5000);
    await new Promise((r) => setTimeout(r, 1000));
    const before = footprint(service.pid);

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
    const durations: number[] = [];
    try {
      for (let i = 0; i < HOSTILE_CALLS; i++) {
        const outcome = await hostile();
        expect(outcome.ok).to.equal(false);
        durations.push(outcome.ms);
      }
    } finally {
      hostileDone = true;
    }
    expect(await friendlyLogins).to.be.above(0);

    await waitFor(() => footprint(service.pid).sandboxes.length <= 1, 5000);
    await new Promise((r) => setTimeout(r, 1000));
    const after = footprint(service.pid);
    const mb = (bytes: number) => Math.round(bytes / MB);
    expect(
      after.bytes - before.bytes,
      `resident memory ${mb(before.bytes)} MB -> ${mb(after.bytes)} MB`,
    ).to.be.below(50 * MB);
    expect(after.threads, "threads of the service and its sandbox processes").to.be.at.most(
      before.threads + 2,
    );
    // Promptly: not at the call's deadline (isolated-vm never settles such a call by itself).
    expect(Math.max(...durations), `hostile logins took ${durations.map(Math.round)} ms`).to.be.below(
      TIMEOUT_MS / 2,
    );
    expect((await friendly()).ok).to.equal(true);

    const metrics = await call(service.base, "GET", "/metrics");
    const restarts =
      /^tessera_sandbox_process_restarts_total\{[^}]*reason="catastrophic"[^}]*\} (\d+)$/m.exec(
        metrics.body as string,
      );
    expect(Number(restarts?.[1])).to.be.at.least(HOSTILE_CALLS);
    expect(after.sandboxes, "one sandbox process, a fresh one").to.have.length(1);
    expect(after.sandboxes[0]).to.not.equal(before.sandboxes[0]);
  });

  it("SIGTERM after such calls: exits within the drain time, no sandbox process left", async () => {
    const sandboxes = sandboxProcessPids(service.pid);
    expect((await hostile()).ok).to.equal(false);
    expect((await friendly()).ok).to.equal(true);
    const all = [...sandboxes, ...sandboxProcessPids(service.pid)];
    const started = performance.now();
    service.child.kill("SIGTERM");
    const code = await Promise.race([
      service.exited,
      new Promise<"still running">((r) => setTimeout(() => r("still running"), GRACE_MS + 5000)),
    ]);
    const ms = performance.now() - started;
    expect(code).to.equal(0);
    expect(ms, `exited after ${Math.round(ms)} ms`).to.be.below(GRACE_MS);
    expect(all, "sandbox processes before SIGTERM").to.have.length.above(0);
    expect(all.filter(isRunning), "sandbox processes still running").to.deep.equal([]);
  });
});
