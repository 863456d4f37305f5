/**
 * `make bench`: starts the platform as `make run` does (test/bench/lib/stack.ts),
 * loads fixed data through the admin and data APIs, runs the scenarios with
 * autocannon, prints a table (req/s, p50, p99, ratio to a baseline measured in
 * the same run) and writes .bench/results-<timestamp>.json and .bench/latest.json.
 *
 *   BENCH_FILTER=<substring>[,<substring>…]  only the scenarios whose id contains one
 *   BENCH_DURATION=<seconds>                 measured seconds per row (default 6)
 *   BENCH_WARMUP=<seconds>                   unrecorded warm-up per row (default 1)
 *   BENCH_ROUNDS=<n>                         slices per row, rows of a scenario alternating (default 3)
 *   BENCH_CPU_PROF=1                         profile the data service (--cpu-prof into
 *                                            .bench/profiles) and print its top 15 frames;
 *                                            scenarios' own data processes are profiled too
 *   BENCH_STRICT=1                           exit 1 when a goal is missed
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { keyHeader } from "../support/http.ts";
import { cpuNow, cpuSpent } from "./lib/cpu.ts";
import { type Fixtures, loadFixtures } from "./lib/fixtures.ts";
import { load, type Slice, summarize, type Target } from "./lib/load.ts";
import { type ProbeResult, probeRoundTrips } from "./lib/probe.ts";
import type { NodeChild } from "./lib/processes.ts";
import { topSelfFrames } from "./lib/profile.ts";
import { computeRatios, formatResults, type Results, writeResults } from "./lib/report.ts";
import { repoRoot, type Stack, startStack } from "./lib/stack.ts";
import type { BenchContext, Scenario } from "./lib/types.ts";
import { LIST_QUERY } from "./scenarios/data-vs-floor.ts";
import { scenarios } from "./scenarios/index.ts";

function say(line: string): void {
  process.stdout.write(`[bench] ${line}\n`);
}

function seconds(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a number of seconds, not '${raw}'`);
  return value;
}

/**
 * autocannon stops by closing its connections; the requests in flight at that moment still run
 * in the server. Let them finish before the next slice (or the shutdown) so they do not weigh on it.
 */
async function settle(slice: Slice): Promise<void> {
  const longest = slice.latencies.reduce((a, b) => Math.max(a, b), 0);
  await new Promise((r) => setTimeout(r, Math.min(5000, Math.max(250, longest * 1.5))));
}

/** After failures under load: what one more request answers, for the report. */
async function sampleFailure(target: Target): Promise<string> {
  try {
    const change = target.next?.() ?? {};
    const url = change.path ? new URL(change.path, target.url).toString() : target.url;
    const body = change.body ?? target.body;
    const r = await fetch(url, {
      method: target.method ?? "GET",
      headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...target.headers },
      body,
    });
    const text = await r.text();
    return `${r.status} ${text.slice(0, 300)}`;
  } catch (err) {
    return `no answer: ${err}`;
  }
}

function git(args: string[]): string {
  try {
    return execFileSync("git", args, {
      cwd: repoRoot,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return "";
  }
}

const duration = seconds("BENCH_DURATION", 6);
const warmup = seconds("BENCH_WARMUP", 1);
const rounds = Math.max(1, Math.round(seconds("BENCH_ROUNDS", 3)));
if (duration < 1) throw new Error("BENCH_DURATION must be at least 1 second");
const filter = process.env.BENCH_FILTER?.trim() || null;
const profiling = ["1", "true", "yes"].includes(process.env.BENCH_CPU_PROF ?? "");
const strict = ["1", "true", "yes"].includes(process.env.BENCH_STRICT ?? "");
const benchDir = path.join(repoRoot, ".bench");
const profileDir = path.join(benchDir, "profiles");

const selected: Scenario[] = filter
  ? scenarios.filter((s) =>
      filter
        .split(",")
        .map((f) => f.trim())
        .some((f) => f && s.id.includes(f)),
    )
  : scenarios;
if (selected.length === 0) {
  say(`BENCH_FILTER='${filter}' matches no scenario; scenarios: ${scenarios.map((s) => s.id).join(", ")}`);
  process.exit(1);
}

const results: Results = {
  run: {
    startedAt: new Date().toISOString(),
    commit: git(["rev-parse", "--short=12", "HEAD"]) || "unknown",
    dirty: git(["status", "--porcelain", "--untracked-files=no"]) !== "",
    node: process.version,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? "?"}`,
    durationSeconds: duration,
    warmupSeconds: warmup,
    rounds,
    filter,
    cpuProfile: profiling ? path.relative(repoRoot, profileDir) : null,
  },
  rows: [],
  checks: [],
  pending: [],
  failed: [],
};

mkdirSync(benchDir, { recursive: true });
if (profiling) mkdirSync(profileDir, { recursive: true });

let stack: Stack | undefined;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping what the bench started`);
    void (stack?.close() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

function makeContext(stack: Stack, fixtures: Fixtures): (scenario: Scenario) => BenchContext {
  const memo = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, make: () => Promise<T>): Promise<T> => {
    let value = memo.get(key) as Promise<T> | undefined;
    if (!value) {
      value = make();
      memo.set(key, value);
    }
    return value;
  };
  const probe = () =>
    once<ProbeResult>("probe", async () => {
      const result = await probeRoundTrips(stack, {
        scope: { account: fixtures.account, project: fixtures.project },
        authorization: keyHeader(fixtures.key).authorization!,
        byKeyPath: `${fixtures.root}/customer/${fixtures.customerName}`,
        listPath: `${fixtures.root}/customer?${LIST_QUERY}`,
      });
      results.probe = result;
      return result;
    });
  const floor = () =>
    once<NodeChild>("floor", async () =>
      stack.startServer("floor server", "test/bench/servers/floor.ts", {
        ...stack.dataEnv,
        FLOOR_QUERIES: JSON.stringify((await probe()).queries),
        FLOOR_PASSWORD: "floor-password",
      }),
    );
  return (scenario) => ({
    stack,
    fixtures,
    log: (line) => say(`${scenario.id}: ${line}`),
    probe,
    floor,
    once,
    check(name, ok, detail) {
      results.checks.push({ scenario: scenario.id, name, ok, detail });
      say(`${scenario.id}: check ${ok === null ? "??" : ok ? "ok" : "FAILED"}: ${name} — ${detail}`);
    },
    pending(reason) {
      results.pending.push({ scenario: scenario.id, title: scenario.title, reason });
      say(`${scenario.id}: not measured yet — ${reason}`);
    },
    async measure(rows) {
      // Warm every row up, then measure them round-robin in `rounds` slices each, so that a
      // change of background load during the scenario weighs on a row and its baseline alike.
      if (warmup > 0) {
        for (const row of rows) await settle(await load(row.target, row.connections, warmup));
      }
      const slices = rows.map((): Slice[] => []);
      const cpu = rows.map((): Record<string, number> => ({}));
      for (let round = 0; round < rounds; round++) {
        for (const [i, row] of rows.entries()) {
          const before = cpuNow(stack.cpuGroups);
          const slice = await load(row.target, row.connections, duration / rounds);
          for (const [k, v] of Object.entries(cpuSpent(before, cpuNow(stack.cpuGroups))))
            cpu[i]![k] = (cpu[i]![k] ?? 0) + v;
          slices[i]!.push(slice);
          await settle(slice);
        }
      }
      for (const [i, row] of rows.entries()) {
        const m = summarize(slices[i]!);
        const url = new URL(row.target.url);
        results.rows.push({
          scenario: scenario.id,
          row: row.name,
          what: row.what,
          target: `${row.target.method ?? "GET"} ${url.pathname}${url.search}`,
          connections: row.connections,
          measurement: m,
          baseline: row.baseline,
          compare: row.baseline ? (row.compare ?? "rps") : undefined,
          goal: row.goal,
          cpuMsPerRequest: Object.fromEntries(
            Object.entries(cpu[i]!).map(([k, v]) => [k, m.requests > 0 ? v / m.requests : 0]),
          ),
        });
        const bad = m.non2xx + m.errors;
        const result = results.rows[results.rows.length - 1]!;
        if (bad > 0) result.failureSample = await sampleFailure(row.target);
        say(
          `${scenario.id}/${row.name}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms` +
            (bad ? `, ${bad} failed (${JSON.stringify(m.statusCodes)}, ${m.errors} errors)` : "") +
            (result.failureSample ? `; one more request: ${result.failureSample}` : "") +
            `; CPU ms per request: ${Object.entries(result.cpuMsPerRequest ?? {})
              .map(([k, v]) => `${k} ${v.toFixed(2)}`)
              .join(", ")}`,
        );
      }
    },
  });
}

let exitCode = 0;
try {
  say(`scenarios: ${selected.map((s) => s.id).join(", ")}; ${duration} s per row (+${warmup} s warm-up)`);
  stack = await startStack({
    log: say,
    dataNodeArgs: profiling ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [],
  });
  const fixtures = await loadFixtures(stack, say);
  const contextFor = makeContext(stack, fixtures);
  for (const scenario of selected) {
    say(`${scenario.id}: ${scenario.title}`);
    try {
      await scenario.run(contextFor(scenario));
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      results.failed.push({ scenario: scenario.id, error });
      say(`${scenario.id}: FAILED — ${error}`);
    }
  }
} catch (err) {
  const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
  results.failed.push({ scenario: "(set-up)", error });
  say(`set-up failed: ${error}`);
} finally {
  const dataPid = stack?.data?.process.pid;
  await stack?.close();
  if (profiling && dataPid !== undefined) {
    const file = readdirSync(profileDir)
      .filter((f) => f.endsWith(".cpuprofile") && f.includes(`.${dataPid}.`))
      .sort()
      .pop();
    if (file) {
      const full = path.join(profileDir, file);
      results.profile = { file: path.relative(repoRoot, full), ...topSelfFrames(full, 15, repoRoot) };
    } else say(`no CPU profile of the data service (pid ${dataPid}) in ${profileDir}`);
    // Scenarios' own data processes (e.g. feed-fanout's) are profiled too: name their files.
    const started = Date.parse(results.run.startedAt);
    for (const other of readdirSync(profileDir).filter(
      (f) => f.endsWith(".cpuprofile") && !f.includes(`.${dataPid}.`),
    )) {
      const full = path.join(profileDir, other);
      if (statSync(full).mtimeMs >= started)
        say(`CPU profile of another data process: ${path.relative(repoRoot, full)}`);
    }
  }
}

computeRatios(results.rows);
process.stdout.write(`\n${formatResults(results)}\n\n`);
say(`results: ${path.relative(repoRoot, writeResults(benchDir, results))} (and .bench/latest.json)`);

if (results.failed.length > 0 || results.checks.some((c) => c.ok === false)) exitCode = 1;
if (results.rows.some((r) => r.measurement.non2xx + r.measurement.errors > 0)) exitCode = 1;
if (strict && results.rows.some((r) => r.met === false)) exitCode = 1;
process.exit(exitCode);
