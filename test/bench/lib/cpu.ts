/**
 * CPU time of the platform's processes (Linux /proc), so that a row can say how much CPU the
 * edge and each service spent per request while it was measured.
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100;

/** user + system CPU of one process, ms; 0 when it is gone. */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may hold spaces), counted from field 3.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The process and its children (nginx's master and workers; a data service and its sandbox hosts). */
function withChildren(pid: number): number[] {
  const children = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [pid, ...children];
}

export type CpuGroups = Record<string, number | undefined>;

/** CPU ms of each named process (with its children) now. */
export function cpuNow(groups: CpuGroups): Record<string, number> {
  return Object.fromEntries(
    Object.entries(groups).flatMap(([name, pid]) =>
      pid === undefined ? [] : [[name, withChildren(pid).reduce((sum, p) => sum + processCpuMs(p), 0)]],
    ),
  );
}

/** CPU ms spent by each group between two readings. */
export function cpuSpent(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, after[k]! - (before[k] ?? 0)]));
}
