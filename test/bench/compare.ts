/**
 * Compares two result files of `make bench`, row by row:
 *   node test/bench/compare.ts .bench/results-<before>.json [.bench/latest.json]
 * Prints req/s, p50 and the ratio to its baseline for both runs, and the change.
 */
import { readFileSync } from "node:fs";
import type { Results } from "./lib/report.ts";

const [beforeFile, afterFile = ".bench/latest.json"] = process.argv.slice(2);
if (!beforeFile) {
  process.stderr.write(
    "usage: node test/bench/compare.ts <before.json> [after.json (default .bench/latest.json)]\n",
  );
  process.exit(2);
}
const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Results;
const before = read(beforeFile);
const after = read(afterFile);

const label = (r: Results) => `${r.run.commit}${r.run.dirty ? "+" : ""} ${r.run.startedAt.slice(0, 16)}`;
process.stdout.write(`before: ${beforeFile} (${label(before)})\nafter:  ${afterFile} (${label(after)})\n\n`);

const pct = (a: number, b: number) =>
  Number.isFinite(a) && Number.isFinite(b) && a !== 0 ? `${(((b - a) / a) * 100).toFixed(0)}%` : "";
const num = (v: number | undefined, digits: number) =>
  v === undefined || !Number.isFinite(v) ? "-" : v.toFixed(digits);

const header = [
  "scenario/row",
  "req/s before",
  "after",
  "change",
  "p50 before",
  "after",
  "ratio before",
  "after",
];
const lines: string[][] = [];
const names = new Set([...before.rows, ...after.rows].map((r) => `${r.scenario}/${r.row}`));
for (const name of names) {
  const b = before.rows.find((r) => `${r.scenario}/${r.row}` === name);
  const a = after.rows.find((r) => `${r.scenario}/${r.row}` === name);
  lines.push([
    name,
    num(b?.measurement.rps, 0),
    num(a?.measurement.rps, 0),
    b && a ? pct(b.measurement.rps, a.measurement.rps) : "",
    num(b?.measurement.p50, 2),
    num(a?.measurement.p50, 2),
    num(b?.ratio, 2),
    num(a?.ratio, 2),
  ]);
}
const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
const fmt = (cells: string[]) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
process.stdout.write(
  `${[fmt(header), widths.map((w) => "-".repeat(w)).join("  "), ...lines.map(fmt)].join("\n")}\n`,
);
