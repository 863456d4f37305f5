/**
 * Issue: one account with 10 projects whose custom providers spin until their
 * time limit (40 concurrent logins for 15 s) slowed another account's plain GET
 * from a 5 ms median to 78 ms and its built-in login to 1.5 s. With each
 * account's fair share of the sandbox, the other account's GET median under
 * the flood stays within 2× its idle median and its login median within 3×.
 *
 * The victim is the fixtures' account: one client reading a customer list and
 * one logging in (built-in provider, argon2id), one request at a time each,
 * first with nothing else running, then while the flooding account (`flood`,
 * 10 projects) sends 40 concurrent logins — all with the stack's configuration
 * (the production defaults).
 */
import { adminClient, call, keyHeader, projectClient } from "../../support/http.ts";
import { LOGIN_USERS, PASSWORD } from "../lib/fixtures.ts";
import type { BenchContext, Scenario } from "../lib/types.ts";

const FLOOD_ACCOUNT = "flood";
const FLOOD_PROJECTS = 10;
const FLOOD_CONNECTIONS = 40;
const IDLE_SECONDS = 8;
const FLOOD_SECONDS = 15;

const SPINNER = `function spinnerCreate() {
  return { authenticate: function () { while (true) {} } };
}`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!;
}

/** Sends `request` one at a time until `running()` is false; the latencies (ms) of the 2xx answers, and the others' statuses. */
async function sequential(
  running: () => boolean,
  request: () => Promise<number>,
): Promise<{ ms: number[]; failed: number[] }> {
  const ms: number[] = [];
  const failed: number[] = [];
  while (running()) {
    const started = performance.now();
    const status = await request();
    if (status >= 200 && status < 300) ms.push(performance.now() - started);
    else failed.push(status);
  }
  return { ms, failed };
}

/** The victim's GET and login medians over `seconds`. */
async function measureVictim(ctx: BenchContext, seconds: number) {
  const { stack, fixtures } = ctx;
  const until = Date.now() + seconds * 1000;
  const running = () => Date.now() < until;
  let n = 0;
  const [get, login] = await Promise.all([
    sequential(running, async () => {
      const r = await fetch(`${stack.baseUrl}${fixtures.root}/Customers?pagesize=20`, {
        headers: keyHeader(fixtures.key),
      });
      await r.arrayBuffer();
      return r.status;
    }),
    sequential(running, async () => {
      const username = LOGIN_USERS[n++ % LOGIN_USERS.length];
      const r = await call(stack.baseUrl, "POST", `${fixtures.root}/@authentication`, {
        body: { username, password: PASSWORD },
      });
      return r.status;
    }),
  ]);
  return { get, login };
}

export const fairShare: Scenario = {
  id: "fair-share",
  title: "Another account's GET and login while one account floods the sandbox",
  describe:
    "Median latency of the fixtures' account's GET Customers and built-in login (one request at a time each) idle " +
    `(${IDLE_SECONDS} s) vs while another account sends ${FLOOD_CONNECTIONS} concurrent logins to ${FLOOD_PROJECTS} projects ` +
    `whose custom providers spin until their time limit (${FLOOD_SECONDS} s). Goals: GET ≤ 2×, login ≤ 3×.`,
  async run(ctx) {
    const { stack } = ctx;
    const admin = adminClient(stack.baseUrl, stack.adminToken);
    await admin.putAccount(FLOOD_ACCOUNT);
    for (let i = 0; i < FLOOD_PROJECTS; i++) {
      const put = await admin.putProject(FLOOD_ACCOUNT, `p${i}`, {
        authentication: { provider: "custom", library: "spinner", createFunction: "spinnerCreate" },
        tables: { note: { key: ["id"], columns: { id: { type: "integer", generated: true } } } },
        apiVersions: { v1: { resources: {} } },
        roles: { "Full access": { tables: { "*": { access: ["read"] } } } },
        libraries: { spinner: { code: SPINNER } },
      });
      if (put.status !== 201 && put.status !== 200)
        return ctx.pending(`the flooding project is refused: ${JSON.stringify(put.body)}`);
    }
    const idle = await measureVictim(ctx, IDLE_SECONDS);

    let flooding = true;
    const statuses: Record<string, number> = {};
    let attempt = 0;
    const floodWorker = async () => {
      while (flooding) {
        const n = attempt++;
        const project = projectClient(stack.baseUrl, FLOOD_ACCOUNT, `p${n % FLOOD_PROJECTS}`);
        const r = await project.login({ username: `u${n}`, password: "x" });
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      }
    };
    const workers = Array.from({ length: FLOOD_CONNECTIONS }, floodWorker);
    const flooded = await measureVictim(ctx, FLOOD_SECONDS);
    flooding = false;
    await Promise.all(workers);

    const ratio = (under: number[], base: number[]) => median(under) / median(base);
    const getRatio = ratio(flooded.get.ms, idle.get.ms);
    const loginRatio = ratio(flooded.login.ms, idle.login.ms);
    const ms = (values: number[]) => `${median(values).toFixed(1)} ms`;
    ctx.log(
      `fair-share: victim GET median ${ms(idle.get.ms)} idle, ${ms(flooded.get.ms)} under the flood (×${getRatio.toFixed(2)}); ` +
        `login ${ms(idle.login.ms)} idle, ${ms(flooded.login.ms)} (×${loginRatio.toFixed(2)}); ` +
        `flood answers ${JSON.stringify(statuses)}`,
    );
    const victimFailures = [
      ...idle.get.failed,
      ...idle.login.failed,
      ...flooded.get.failed,
      ...flooded.login.failed,
    ];
    ctx.check(
      "the other account is never refused",
      victimFailures.length === 0,
      victimFailures.length === 0 ? "every answer 2xx" : `non-2xx: ${victimFailures.join(", ")}`,
    );
    ctx.check(
      "victim GET median under the flood ≤ 2× idle",
      getRatio <= 2,
      `${ms(idle.get.ms)} → ${ms(flooded.get.ms)} (×${getRatio.toFixed(2)}; ${flooded.get.ms.length} GETs)`,
    );
    ctx.check(
      "victim login median under the flood ≤ 3× idle",
      loginRatio <= 3,
      `${ms(idle.login.ms)} → ${ms(flooded.login.ms)} (×${loginRatio.toFixed(2)}; ${flooded.login.ms.length} logins)`,
    );
    ctx.check(
      "the flooding account is refused (429)",
      (statuses["429"] ?? 0) > 0,
      `flood answers by status: ${JSON.stringify(statuses)}`,
    );
  },
};
