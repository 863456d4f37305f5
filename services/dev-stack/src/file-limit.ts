/**
 * The open-file limit the dev stack starts FerretDB under (FERRETDB_FILE_LIMIT, config.ts). The
 * patched FerretDB sizes how many tenant databases it keeps warm from its limit (up to four files each),
 * so the limit decides how many tenants answer at warm speed. util-linux `prlimit` sets the limit on
 * itself and then runs FerretDB in its place, so FerretDB starts under it; when this process may
 * not set it (raising the hard limit takes CAP_SYS_RESOURCE, which root inside a container often
 * lacks) FerretDB starts under the hard limit it inherits, and the stack says so.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

export interface FileLimitFacts {
  /** This process's hard limit of open files (null where /proc cannot tell). */
  hard: number | null;
  /** The kernel's ceiling for any process's limit (fs.nr_open; null where unknown). */
  ceiling: number | null;
  /** Whether util-linux `prlimit` runs here. */
  prlimit: boolean;
  /** Whether a process started under `prlimit --nofile=n:n` gets that limit (tried, not guessed). */
  canSet: (n: number) => boolean;
}

/** How to start FerretDB: under `prlimit --nofile=limit:limit`, or as is; `note` says why not as asked. */
export interface FileLimitPlan {
  prlimit: boolean;
  /** The limit FerretDB gets (null: unknown, inherited). */
  limit: number | null;
  note?: string;
}

export function planFileLimit(wanted: number, facts: FileLimitFacts): FileLimitPlan {
  if (!facts.prlimit)
    return { prlimit: false, limit: facts.hard, note: "util-linux prlimit is not available: inherited" };
  const asked = Math.min(wanted, facts.ceiling ?? wanted);
  const capped = asked < wanted ? `fs.nr_open is ${facts.ceiling}` : undefined;
  if (facts.canSet(asked)) return { prlimit: true, limit: asked, note: capped };
  // Lowering a limit needs no permission, and neither does raising the soft limit to the hard one.
  if (facts.hard !== null && facts.hard < asked)
    return {
      prlimit: true,
      limit: facts.hard,
      note: `this process may not raise its hard limit of ${facts.hard} (CAP_SYS_RESOURCE)`,
    };
  return { prlimit: false, limit: facts.hard, note: `prlimit --nofile=${asked} failed: inherited` };
}

/** The hard "Max open files" of /proc/self/limits, or null. */
export function hardFileLimit(limits: string): number | null {
  const hard = /^Max open files\s+\S+\s+(\d+)/m.exec(limits)?.[1];
  return hard === undefined ? null : Number(hard);
}

function readOr(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

const runs = (args: string[]) => spawnSync("prlimit", args, { stdio: "ignore" }).status === 0;

/** This machine's facts, read once (prlimit is tried with `true` as the command). */
export function machineFileLimitFacts(): FileLimitFacts {
  const ceiling = Number.parseInt(readOr("/proc/sys/fs/nr_open"), 10);
  return {
    hard: hardFileLimit(readOr("/proc/self/limits")),
    ceiling: Number.isFinite(ceiling) ? ceiling : null,
    prlimit: runs(["--version"]),
    canSet: (n) => runs([`--nofile=${n}:${n}`, "true"]),
  };
}

/** The command that starts `binary` with `args` under the plan. */
export function underFileLimit(plan: FileLimitPlan, binary: string, args: string[]): [string, string[]] {
  if (!plan.prlimit || plan.limit === null) return [binary, args];
  return ["prlimit", [`--nofile=${plan.limit}:${plan.limit}`, "--", binary, ...args]];
}
