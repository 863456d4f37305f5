/**
 * A real data-service process (its `main.ts`, as deployed) for tests of
 * process-level behaviour: shutdown, sandbox processes, memory. Uses the test
 * stores with an isolation prefix of its own; `cleanup` kills it if still
 * running and drops its databases.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "../../services/dev-stack/src/stores.ts";
import type { DataConfig } from "../../shared/config/config.ts";
import { call } from "./http.ts";
import { isolationPrefix, testStores } from "./stores.ts";

export interface DataProcess {
  base: string;
  child: ChildProcess;
  pid: number;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  adminToken: string;
  serviceToken: string;
  cleanup(): Promise<void>;
}

const MAIN = path.resolve(import.meta.dirname, "../../services/data/src/main.ts");

export async function startDataProcess(env: Record<string, string> = {}): Promise<DataProcess> {
  const { mongoUrl, redisEnv } = await testStores();
  const prefix = isolationPrefix();
  const port = await freePort();
  const child = spawn(process.execPath, ["--no-node-snapshot", MAIN], {
    env: {
      ...process.env,
      MONGO_URL: mongoUrl,
      META_DB: `${prefix}meta`,
      TENANT_DB_PREFIX: prefix,
      ...redisEnv,
      REDIS_PREFIX: `tessera-test:${prefix}`,
      ADMIN_TOKEN: "admin-token",
      SERVICE_TOKEN: "service-token",
      LOG_LEVEL: "silent",
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
    },
    stdio: "ignore",
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  let ready = false;
  for (let i = 0; i < 300 && !ready; i++) {
    ready = (await call(base, "GET", "/readyz").catch(() => undefined))?.status === 200;
    if (child.exitCode !== null) throw new Error(`the data service exited with ${child.exitCode}`);
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  if (!ready) {
    child.kill("SIGKILL");
    throw new Error("the data service did not become ready");
  }
  return {
    base,
    child,
    pid: child.pid!,
    exited,
    adminToken: "admin-token",
    serviceToken: "service-token",
    async cleanup() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      const { MongoClient } = (await import("mongoose")).default.mongo;
      const client = await new MongoClient(mongoUrl).connect();
      try {
        const { databases } = await client.db("admin").command({ listDatabases: 1, nameOnly: true });
        for (const { name } of databases as { name: string }[])
          if (name.startsWith(prefix)) await client.db(name).dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}

/** The pids of a process's children (Linux: /proc/<pid>/task/<tid>/children). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** The sandbox host processes among a process's children. */
export function sandboxProcessPids(pid: number): number[] {
  return childPids(pid).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, "utf8").includes("host-process.ts");
    } catch {
      return false;
    }
  });
}

/** Resident memory of a process in bytes (VmRSS), 0 when it is gone. */
export function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** True while `pid` exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** The environment that configures a data service as `config` does (to start one more process of a platform's deployment). */
export function dataServiceEnv(config: DataConfig): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(config)) {
    if (value === undefined) continue;
    // Lists as comma-separated text; keys (SECRETS_KEY) in base64, as they were given.
    const text = (v: unknown) => (Buffer.isBuffer(v) ? v.toString("base64") : String(v));
    // Maps (PLANS) as the JSON object they were given as.
    if (value instanceof Map) env[name] = JSON.stringify(Object.fromEntries(value));
    else env[name] = Array.isArray(value) ? value.map(text).join(",") : text(value);
  }
  return env;
}
