/**
 * The README's walk-through, run as it is written: its shell block is taken from README.md and
 * run with bash against a base URL, with PORT and DATA_DIR pointing at it as they would at
 * `make run`. Every curl call is recorded (a shell function wraps it).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "../..");

/** The first ```sh block after the "## Walk-through" heading. */
function walkThrough(): string {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Walk-through"));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error("README.md has no ```sh block under '## Walk-through'");
  return block[1]!;
}

/** Records every call (its status and arguments) in $CALL_LOG and prints the body as curl would. */
const RECORDING_CURL = `
curl() {
  local out status args="$*"
  out=$(command curl -w '\\n%{http_code}' "$@")
  status=\${out##*$'\\n'}
  printf '%s %s\\n' "$status" "\${args//$'\\n'/ }" >> "$CALL_LOG"
  printf '%s\\n' "\${out%$'\\n'*}"
}
`;

export interface Call {
  status: number;
  args: string;
}

/** Runs the walk-through against `baseUrl` (http://127.0.0.1:<port>) as the operator holding `adminToken`. */
export async function runWalkThrough(
  baseUrl: string,
  adminToken: string,
): Promise<{ calls: Call[]; output: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-readme-"));
  try {
    writeFileSync(path.join(dir, "admin-token"), `${adminToken}\n`);
    const log = path.join(dir, "calls.log");
    writeFileSync(log, "");
    const { stdout } = await run("bash", ["-c", RECORDING_CURL + walkThrough()], {
      cwd: dir,
      env: { ...process.env, PORT: new URL(baseUrl).port, DATA_DIR: dir, CALL_LOG: log },
    });
    const calls = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => ({ status: Number(line.slice(0, 3)), args: line.slice(4) }));
    return { calls, output: stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
