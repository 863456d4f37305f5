/** The printed table and the JSON results (.bench/results-<timestamp>.json, .bench/latest.json). */
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { ProbeResult } from "./probe.ts";
import type { Check, PendingScenario, RowResult } from "./types.ts";

export interface RunInfo {
  startedAt: string;
  commit: string;
  dirty: boolean;
  node: string;
  cpus: string;
  durationSeconds: number;
  warmupSeconds: number;
  rounds: number;
  filter: string | null;
  cpuProfile: string | null;
}

export interface Results {
  run: RunInfo;
  rows: RowResult[];
  checks: Check[];
  pending: PendingScenario[];
  failed: { scenario: string; error: string }[];
  /** Store round trips counted by the probe, and the finds the floor server replayed. */
  probe?: ProbeResult;
  profile?: { file: string; busyMs: number; frames: { frame: string; selfMs: number; percent: number }[] };
}

/** Ratios of rows to their baselines, and whether each goal is met. */
export function computeRatios(rows: RowResult[]): void {
  for (const row of rows) {
    if (!row.baseline) continue;
    const base = rows.find((r) => r.scenario === row.scenario && r.row === row.baseline);
    if (!base) continue;
    row.ratio =
      row.compare === "p50"
        ? row.measurement.p50 / base.measurement.p50
        : row.measurement.rps / base.measurement.rps;
    if (row.goal) row.met = row.goal.op === ">=" ? row.ratio >= row.goal.value : row.ratio <= row.goal.value;
  }
}

function table(header: string[], lines: string[][], rightAligned: Set<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ");
  return [fmt(header), widths.map((w) => "-".repeat(w)).join("  "), ...lines.map(fmt)].join("\n");
}

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : "-");

export function formatResults(results: Results): string {
  const out: string[] = [];
  const { run } = results;
  out.push(
    `Tessera benchmarks — ${run.startedAt}, commit ${run.commit}${run.dirty ? " (+ uncommitted changes)" : ""}, ` +
      `node ${run.node}, ${run.cpus}; ${run.durationSeconds} s per row in ${run.rounds} alternating slices, ` +
      `after ${run.warmupSeconds} s warm-up`,
  );
  out.push("");
  const lines = results.rows.map((r) => {
    const m = r.measurement;
    const bad = m.non2xx + m.errors;
    return [
      `${r.scenario}/${r.row}`,
      String(r.connections),
      m.rps.toFixed(0),
      ms(m.p50),
      ms(m.p99),
      r.baseline ?? "",
      r.ratio === undefined ? "" : `${r.ratio.toFixed(2)} (${r.compare === "p50" ? "p50" : "req/s"})`,
      r.goal ? `${r.goal.op} ${r.goal.value}${r.met ? " ok" : " MISSED"}` : "",
      bad ? `${bad} failed` : "",
    ];
  });
  out.push(
    table(
      ["scenario/row", "conns", "req/s", "p50 ms", "p99 ms", "baseline", "ratio", "goal", "errors"],
      lines,
      new Set([1, 2, 3, 4]),
    ),
  );
  const failing = results.rows.filter((r) => r.measurement.non2xx + r.measurement.errors > 0);
  if (failing.length > 0) {
    out.push("", "Rows with failed requests (status counts; what one more request answered):");
    for (const r of failing) {
      out.push(
        `  - ${r.scenario}/${r.row}: ${JSON.stringify(r.measurement.statusCodes)}, ${r.measurement.errors} connection errors`,
      );
      if (r.failureSample) out.push(`      ${r.failureSample}`);
    }
  }
  if (results.checks.length > 0) {
    out.push("", "Checks:");
    for (const c of results.checks) {
      const mark = c.ok === null ? "??" : c.ok ? "ok" : "FAILED";
      out.push(`  [${mark}] ${c.scenario}: ${c.name}`, `         ${c.detail}`);
    }
  }
  if (results.pending.length > 0) {
    out.push("", "Not measured yet (feature not in the code):");
    for (const p of results.pending) out.push(`  - ${p.scenario}: ${p.title}`, `      ${p.reason}`);
  }
  if (results.failed.length > 0) {
    out.push("", "Scenarios that failed:");
    for (const f of results.failed) out.push(`  - ${f.scenario}: ${f.error}`);
  }
  if (results.profile) {
    const p = results.profile;
    out.push(
      "",
      `CPU profile of the data service (${path.basename(p.file)}), ${p.busyMs.toFixed(0)} ms busy; top ${p.frames.length} frames by self time:`,
    );
    out.push(
      table(
        ["self ms", "%", "frame"],
        p.frames.map((f) => [f.selfMs.toFixed(1), f.percent.toFixed(1), f.frame]),
        new Set([0, 1]),
      ),
    );
  }
  return out.join("\n");
}

/** Writes .bench/results-<timestamp>.json and .bench/latest.json; returns the first path. */
export function writeResults(dir: string, results: Results): string {
  const stamp = results.run.startedAt.replace(/[:.]/g, "-");
  const file = path.join(dir, `results-${stamp}.json`);
  const text = `${JSON.stringify(results, null, 2)}\n`;
  writeFileSync(file, text);
  writeFileSync(path.join(dir, "latest.json"), text);
  return file;
}
