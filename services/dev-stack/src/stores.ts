/**
 * Finds or starts the two stores for local runs and tests (docs/operations.md):
 * MongoDB = MONGO_URL, else a FerretDB (SQLite backend) from the tools folder;
 * Redis = REDIS_URL, else 127.0.0.1:6379 when it answers, else a redis-server we start.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { devStackConfig } from "./config.ts";
import { type FileLimitPlan, machineFileLimitFacts, planFileLimit, underFileLimit } from "./file-limit.ts";

export interface StartedStore {
  url: string;
  /** Present when we started the process; stop() ends it. */
  stop: () => Promise<void>;
  /** The process id, when we started the process. */
  pid?: number;
}

const repoRoot = path.resolve(import.meta.dirname, "../../..");
export const ferretdbBinary = path.join(repoRoot, ".tools/bin/ferretdb");
/** FerretDB built without Tessera's patch: only the differential test of the patch uses it. */
export const ferretdbStockBinary = path.join(repoRoot, ".tools/bin/ferretdb-stock");

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function portAnswers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

export async function waitForPort(
  port: number,
  child: ChildProcess,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`${what} exited with code ${child.exitCode} before it listened`);
    if (await portAnswers("127.0.0.1", port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not listen on port ${port} within ${timeoutMs} ms`);
}

/** A store we started must not outlive us, even when we exit without stopping it. */
export function tieToThisProcess(child: ChildProcess): void {
  const kill = () => child.kill("SIGTERM");
  process.once("exit", kill);
  child.once("exit", () => process.off("exit", kill));
}

export function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM");
    });
}

let filePlan: FileLimitPlan | undefined;

/** FerretDB's open-file limit (FERRETDB_FILE_LIMIT, as far as this process may set it), decided once. */
function ferretdbFileLimit(log: (line: string) => void): FileLimitPlan {
  if (!filePlan) {
    const wanted = devStackConfig().FERRETDB_FILE_LIMIT;
    filePlan = planFileLimit(wanted, machineFileLimitFacts());
    if (filePlan.note)
      log(`ferretdb: open-file limit ${filePlan.limit ?? "inherited"}, not ${wanted}: ${filePlan.note}`);
  }
  return filePlan;
}

/**
 * Starts FerretDB with its SQLite backend, state under `stateDir`, under the open-file limit of
 * FERRETDB_FILE_LIMIT where this process may set it (file-limit.ts).
 */
export async function startFerretdb(
  stateDir: string,
  log: (line: string) => void,
  binary = ferretdbBinary,
  env: Record<string, string> = {},
): Promise<StartedStore> {
  if (!existsSync(binary)) {
    throw new Error(`FerretDB is not built (${binary}); run 'make tools' or set MONGO_URL`);
  }
  mkdirSync(stateDir, { recursive: true });
  const port = await freePort();
  const [command, args] = underFileLimit(ferretdbFileLimit(log), binary, [
    "--handler=sqlite",
    `--sqlite-url=file:${stateDir}/`,
    `--listen-addr=127.0.0.1:${port}`,
    "--debug-addr=-",
    "--telemetry=disable",
    "--log-level=error",
    `--state-dir=${stateDir}`,
  ]);
  // prlimit sets the limit on itself and then runs FerretDB in its place (same process id).
  const child = spawn(command, args, {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
  });
  child.stderr?.on("data", (chunk: Buffer) => log(`ferretdb: ${chunk.toString().trim()}`));
  tieToThisProcess(child);
  await waitForPort(port, child, "FerretDB");
  return { url: `mongodb://127.0.0.1:${port}/`, stop: stopper(child), pid: child.pid };
}

/** Starts redis-server with AOF persistence under `stateDir`. */
export async function startRedisServer(stateDir: string): Promise<StartedStore> {
  mkdirSync(stateDir, { recursive: true });
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", stateDir, "--appendonly", "yes", "--save", ""],
    { stdio: "ignore" },
  );
  tieToThisProcess(child);
  await waitForPort(port, child, "redis-server");
  return { url: `redis://127.0.0.1:${port}/`, stop: stopper(child) };
}

export async function findOrStartMongo(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  log: (line: string) => void,
): Promise<StartedStore> {
  if (env.MONGO_URL) return { url: env.MONGO_URL, stop: async () => {} };
  return startFerretdb(path.join(dataDir, "ferretdb"), log);
}

export async function findOrStartRedis(env: NodeJS.ProcessEnv, dataDir: string): Promise<StartedStore> {
  if (env.REDIS_URL) return { url: env.REDIS_URL, stop: async () => {} };
  if (await portAnswers("127.0.0.1", 6379)) return { url: "redis://127.0.0.1:6379/", stop: async () => {} };
  return startRedisServer(path.join(dataDir, "redis"));
}
