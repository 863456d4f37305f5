/**
 * `make run`: brings up the whole platform on one base URL — the stores when
 * not given (FerretDB, Redis), the data and auth services and the console's
 * server (serving the build `make run` made first) as child processes, and the
 * edge on PORT: nginx, configured from the routing table (edge.ts). Ctrl-C /
 * SIGTERM stops everything it started.
 * DATA_REPLICAS and AUTH_REPLICAS (default 1) start that many processes of the
 * data and auth services: the edge takes them in turn, the auth service reaches
 * the data replicas through a port of the edge that stands in for the data
 * service's Kubernetes Service, and a replica that dies is started again (on the
 * same port); the edge skips it while it refuses connections.
 * Several stacks run side by side with different PORT and DATA_DIR values.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { dataConfigSchema } from "../../../shared/config/config.ts";
import type { ServiceName } from "../../../shared/routing/routes.ts";
import { type Edge, startEdge } from "./edge.ts";
import { findOrStartMongo, findOrStartRedis, freePort, type StartedStore } from "./stores.ts";

const repoRoot = path.resolve(import.meta.dirname, "../../..");

function say(line: string): void {
  process.stdout.write(`[tessera] ${line}\n`);
}

function persistentSecret(file: string, given: string | undefined, bytes = 24): string {
  if (given) return given;
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const value = randomBytes(bytes).toString("base64url");
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return value;
}

function spawnService(name: ServiceName, env: NodeJS.ProcessEnv): ChildProcess {
  const args = [
    ...(name === "data" ? ["--no-node-snapshot"] : []),
    path.join(repoRoot, `services/${name}/src/main.ts`),
  ];
  return spawn(process.execPath, args, { env, stdio: ["ignore", "inherit", "inherit"] });
}

/** One process the stack cannot do without: when it exits, the stack stops. */
function startService(name: ServiceName, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawnService(name, env);
  child.on("exit", (code, signal) => {
    if (!stopping) {
      say(`${name} service exited (${signal ?? code}); stopping`);
      void stop(1);
    }
  });
  children.add(child);
  return child;
}

/**
 * Replica `index` of a service on `port`, kept running: when it exits it is started again on the
 * same port (sooner when it had run for a while). The edge skips it while it refuses connections.
 */
function superviseReplica(name: ServiceName, index: number, port: number, env: NodeJS.ProcessEnv): void {
  const url = `http://127.0.0.1:${port}`;
  let quickExits = 0;
  const start = () => {
    const startedAt = Date.now();
    const child = spawnService(name, { ...env, PORT: String(port) });
    children.add(child);
    say(`${name} replica ${index}: pid ${child.pid} on ${url}`);
    child.on("exit", (code, signal) => {
      children.delete(child);
      if (stopping) return;
      quickExits = Date.now() - startedAt < 10_000 ? quickExits + 1 : 0;
      const delayMs = Math.min(250 * 2 ** quickExits, 10_000);
      say(`${name} replica ${index} exited (${signal ?? code}); starting it again in ${delayMs} ms`);
      setTimeout(start, delayMs);
    });
  };
  start();
}

async function ready(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
    await r.body?.cancel();
    return r.ok;
  } catch {
    return false;
  }
}

let stopping = false;
const children = new Set<ChildProcess>();
const stores: StartedStore[] = [];
let edge: Edge | undefined;

async function stop(code: number): Promise<void> {
  stopping = true;
  await edge?.stop();
  await Promise.all(
    [...children].map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once("exit", () => resolve());
          c.kill("SIGTERM");
          setTimeout(() => c.kill("SIGKILL"), 15_000).unref();
        }),
    ),
  );
  await Promise.all(stores.map((s) => s.stop()));
  say("stopped");
  process.exit(code);
}

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 8080);
  const dataDir = path.resolve(process.env.DATA_DIR ?? path.join(repoRoot, ".data"));
  mkdirSync(dataDir, { recursive: true });
  process.once("SIGINT", () => void stop(0));
  process.once("SIGTERM", () => void stop(0));

  const adminToken = persistentSecret(path.join(dataDir, "admin-token"), process.env.ADMIN_TOKEN);
  const serviceToken = persistentSecret(path.join(dataDir, "service-token"), process.env.SERVICE_TOKEN);
  // Seals the webhook signing secrets the data service stores (a key of 32 random bytes).
  const secretsKey = persistentSecret(path.join(dataDir, "secrets-key"), process.env.SECRETS_KEY, 32);
  const mongo = await findOrStartMongo(process.env, dataDir, (line) => process.stderr.write(`${line}\n`));
  stores.push(mongo);
  // Sentinel or Cluster (REDIS_MODE): the services find Redis by those settings; nothing to start.
  const redisMode = process.env.REDIS_MODE ?? "single";
  const redis: StartedStore =
    redisMode === "single"
      ? await findOrStartRedis(process.env, dataDir)
      : { url: `REDIS_MODE=${redisMode}`, stop: async () => {} };
  stores.push(redis);
  // Stacks sharing one Redis keep apart by prefix, derived from their DATA_DIR.
  const prefix =
    process.env.REDIS_PREFIX ?? `tessera:${createHash("sha256").update(dataDir).digest("hex").slice(0, 8)}:`;

  const replicas = (name: string) => {
    const n = Number(process.env[name] ?? 1);
    if (!Number.isInteger(n) || n < 1 || n > 16)
      throw new Error(`${name} must be a whole number from 1 to 16`);
    return n;
  };
  const ports = async (n: number) => Promise.all(Array.from({ length: n }, () => freePort()));
  const [authPorts, dataPorts, consolePort, dataServicePort] = [
    await ports(replicas("AUTH_REPLICAS")),
    await ports(replicas("DATA_REPLICAS")),
    await freePort(),
    await freePort(),
  ];
  const urls = (list: number[]) => list.map((p) => `http://127.0.0.1:${p}`);
  const addresses = (list: number[]) => list.map((p) => `127.0.0.1:${p}`);
  const common = {
    ...process.env,
    HOST: "127.0.0.1",
    ...(redisMode === "single" ? { REDIS_URL: redis.url } : {}),
    REDIS_PREFIX: prefix,
    ADMIN_TOKEN: adminToken,
    SERVICE_TOKEN: serviceToken,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    // The edge reaches the services from 127.0.0.1; only its X-Forwarded-* are believed.
    TRUSTED_PROXIES: "127.0.0.1",
  };
  // The auth service reaches the data service's internal API through the edge's stand-in for the
  // data service's Kubernetes Service (every replica, in turn).
  const dataServiceUrl = `http://127.0.0.1:${dataServicePort}`;
  dataPorts.forEach((p, i) => {
    superviseReplica("data", i + 1, p, { ...common, MONGO_URL: mongo.url, SECRETS_KEY: secretsKey });
  });
  authPorts.forEach((p, i) => {
    superviseReplica("auth", i + 1, p, { ...common, DATA_SERVICE_URL: dataServiceUrl });
  });
  // The console's static server: no secrets, no stores.
  startService("console", {
    PATH: process.env.PATH,
    HOST: "127.0.0.1",
    PORT: String(consolePort),
    LOG_LEVEL: common.LOG_LEVEL,
  });
  const allReady = async (list: string[]) => (await Promise.all(list.map(ready))).every(Boolean);
  const started = startEdge(path.join(dataDir, "edge"), {
    host: process.env.EDGE_HOST ?? "127.0.0.1",
    port,
    upstreams: {
      auth: addresses(authPorts),
      data: addresses(dataPorts),
      console: addresses([consolePort]),
    },
    // The data service's limit (the largest): larger bodies are answered 413 at the edge.
    maxBodyBytes: dataConfigSchema.shape.MAX_BODY_BYTES.parse(process.env.MAX_BODY_BYTES),
    serviceListeners: [{ listen: `127.0.0.1:${dataServicePort}`, service: "data" }],
    workers: "auto",
  });
  try {
    edge = await started;
  } catch (err) {
    say(`the edge (nginx) did not start: ${(err as Error).message}`);
    return stop(1);
  }
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (!((await ready(base)) && (await allReady([...urls(authPorts), ...urls(dataPorts)])))) {
    if (Date.now() > deadline) {
      say("the services did not become ready within 60 s");
      return stop(1);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  say(`ready: ${base}/rest (data and auth API), ${base}/admin/v1 (admin API), ${base}/console/ (console)`);
  say(
    process.env.ADMIN_TOKEN
      ? "admin token: the ADMIN_TOKEN you set"
      : `admin token: in ${path.join(dataDir, "admin-token")}`,
  );
  say(
    `MongoDB: ${process.env.MONGO_URL ? "MONGO_URL" : `FerretDB (state in ${dataDir}/ferretdb)`}; Redis: ${redis.url}`,
  );
  say("Ctrl-C stops everything this command started");
}

await main();
