/**
 * A steady load of logins and authenticated reads against a platform, with
 * revocations going on, across a Redis failover: what failed and when, how long
 * the failures lasted, and whether every revocation acknowledged before the
 * failure is still refused after it.
 */
import { expect } from "chai";
import { demoProject } from "../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../support/http.ts";
import type { Platform } from "../support/platform.ts";

export interface Outcome {
  what: "login" | "read" | "revoke";
  startedAt: number;
  endedAt: number;
  status: number;
  errorCode?: number;
}

export interface FailoverReport {
  /** From the kill to the end of the last failed request (ms); 0 when nothing failed. */
  gapMs: number;
  failed: Outcome[];
  outcomes: Outcome[];
  revokedBeforeKill: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A project with a user and keys to read with and to revoke. */
export async function prepareProject(platform: Platform, keys = 40) {
  const admin = adminClient(platform.baseUrl, platform.adminToken);
  expect((await admin.putAccount("acme")).status).to.be.oneOf([200, 201]);
  expect((await admin.putProject("acme", "demo", demoProject())).status).to.be.oneOf([200, 201]);
  expect(
    (await admin.putUser("acme", "demo", "alice", { password: "alice-password", roles: ["Full access"] }))
      .status,
  ).to.be.oneOf([200, 201]);
  const created: { id: string; apikey: string }[] = [];
  for (let i = 0; i < keys; i++) {
    const r = await admin.createKey("acme", "demo", { name: `k${i}`, roles: ["Full access"] });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    created.push({ id: r.body.id, apikey: r.body.apikey });
  }
  return { admin, demo: projectClient(platform.baseUrl, "acme", "demo"), keys: created };
}

/**
 * Runs `workers` loops of login + read and one loop of revocations; after `beforeKillMs` calls
 * `kill`, then goes on until requests have succeeded for `settleMs` in a row (at most `maxMs`).
 */
export async function loadThroughFailover(
  platform: Platform,
  kill: () => Promise<void> | void,
  options: { workers?: number; beforeKillMs?: number; settleMs?: number; maxMs?: number } = {},
): Promise<FailoverReport> {
  const { workers = 4, beforeKillMs = 1500, settleMs = 3000, maxMs = 45_000 } = options;
  const { admin, demo, keys } = await prepareProject(platform);
  const readKey = keys.shift()!;
  const outcomes: Outcome[] = [];
  const revoked: { apikey: string; ackedAt: number }[] = [];
  let stop = false;
  const record = async (what: Outcome["what"], request: () => Promise<{ status: number; body: unknown }>) => {
    const startedAt = Date.now();
    let status = 0;
    let errorCode: number | undefined;
    try {
      const r = await request();
      status = r.status;
      errorCode = (r.body as { errorCode?: number } | undefined)?.errorCode;
    } catch {
      status = 0;
    }
    const outcome = { what, startedAt, endedAt: Date.now(), status, errorCode };
    outcomes.push(outcome);
    return outcome;
  };
  const worker = async () => {
    while (!stop) {
      await record("login", () => demo.login({ username: "alice", password: "alice-password" }));
      await record("read", () => demo.get(readKey.apikey, "customer"));
    }
  };
  const revoker = async () => {
    while (!stop && keys.length > 0) {
      const key = keys.shift()!;
      const outcome = await record("revoke", () => admin.deleteKey("acme", "demo", key.id));
      if (outcome.status === 200) revoked.push({ apikey: key.apikey, ackedAt: outcome.endedAt });
      await sleep(100);
    }
  };
  const running = [...Array.from({ length: workers }, worker), revoker()];
  await sleep(beforeKillMs);
  const killedAt = Date.now();
  await kill();
  const deadline = killedAt + maxMs;
  for (;;) {
    await sleep(200);
    const failures = outcomes.filter((o) => o.status !== 200 && o.status !== 201);
    const lastFailure = Math.max(killedAt, ...failures.map((o) => o.endedAt));
    const successesSince = outcomes.filter((o) => o.startedAt > lastFailure && o.what !== "revoke").length;
    if (Date.now() - lastFailure >= settleMs && successesSince > 0) break;
    if (Date.now() > deadline) break;
  }
  stop = true;
  await Promise.all(running);
  const failed = outcomes.filter((o) => o.status !== 200 && o.status !== 201);
  const gapMs = failed.length === 0 ? 0 : Math.max(...failed.map((o) => o.endedAt)) - killedAt;

  // Every revocation acknowledged before the kill is still refused after it.
  const revokedBeforeKill = revoked.filter((r) => r.ackedAt < killedAt);
  expect(revokedBeforeKill.length, "revocations acknowledged before the kill").to.be.greaterThan(0);
  for (const r of revoked) {
    const answer = await demo.get(r.apikey, "customer");
    expect(answer.status, `a key revoked ${r.ackedAt < killedAt ? "before" : "after"} the kill`).to.equal(
      401,
    );
  }
  expect(
    failed.filter((o) => o.endedAt < killedAt),
    "nothing fails before the kill",
  ).to.deep.equal([]);
  // 503 only: no user is locked out by attempts whose outcome Redis could not record during it.
  for (const o of failed) expect(o.status, JSON.stringify(o)).to.equal(503);
  // And it works after.
  expect((await demo.login({ username: "alice", password: "alice-password" })).status).to.equal(200);
  expect((await demo.get(readKey.apikey, "customer")).status).to.equal(200);
  return { gapMs, failed, outcomes, revokedBeforeKill: revokedBeforeKill.length };
}

export function describeReport(topology: string, report: FailoverReport): string {
  const byKind = (what: Outcome["what"]) =>
    `${report.outcomes.filter((o) => o.what === what).length} ${what}s (${report.failed.filter((o) => o.what === what).length} failed)`;
  return `${topology}: requests failed (503) for ${(report.gapMs / 1000).toFixed(2)} s after the kill; ${byKind("login")}, ${byKind("read")}, ${byKind("revoke")}; ${report.revokedBeforeKill} revocations acknowledged before the kill, all still refused`;
}
