/**
 * `make run`: brings up the whole platform on one base URL — the stores when
 * not given (FerretDB, Redis), the data and auth services as child processes,
 * and the gateway on PORT. Ctrl-C / SIGTERM stops everything it started.
 * Several stacks run side by side with different PORT and DATA_DIR values.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createGateway } from "./gateway.ts";
import { findOrStartMongo, findOrStartRedis, freePort, type StartedStore } from "./stores.ts";

const repoRoot = path.resolve(import.meta.dirname, "../../..");

function say(line: string): void {
  process.stdout.write(`[tessera] ${line}\n`);
}

function persistentSecret(file: string, given: string | undefined): string {
  if (given) return given;
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const value = randomBytes(24).toString("base64url");
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return value;
}

function startService(name: "auth" | "data", env: NodeJS.ProcessEnv): ChildProcess {
  const args = [
    ...(name === "data" ? ["--no-node-snapshot"] : []),
    path.join(repoRoot, `services/${name}/src/main.ts`),
  ];
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "inherit", "inherit"] });
  child.on("exit", (code, signal) => {
    if (!stopping) {
      say(`${name} service exited (${signal ?? code}); stopping`);
      void stop(1);
    }
  });
  return child;
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
const children: ChildProcess[] = [];
const stores: StartedStore[] = [];
let gatewayClose: (() => void) | undefined;

async function stop(code: number): Promise<void> {
  stopping = true;
  gatewayClose?.();
  await Promise.all(
    children.map(
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
  const mongo = await findOrStartMongo(process.env, dataDir, (line) => process.stderr.write(`${line}\n`));
  stores.push(mongo);
  const redis = await findOrStartRedis(process.env, dataDir);
  stores.push(redis);
  // Stacks sharing one Redis keep apart by prefix, derived from their DATA_DIR.
  const prefix =
    process.env.REDIS_PREFIX ?? `tessera:${createHash("sha256").update(dataDir).digest("hex").slice(0, 8)}:`;

  const [authPort, dataPort] = [await freePort(), await freePort()];
  const common = {
    ...process.env,
    HOST: "127.0.0.1",
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
    ADMIN_TOKEN: adminToken,
    SERVICE_TOKEN: serviceToken,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  };
  children.push(
    startService("data", { ...common, PORT: String(dataPort), MONGO_URL: mongo.url }),
    startService("auth", {
      ...common,
      PORT: String(authPort),
      DATA_SERVICE_URL: `http://127.0.0.1:${dataPort}`,
    }),
  );
  const authUrl = `http://127.0.0.1:${authPort}`;
  const dataUrl = `http://127.0.0.1:${dataPort}`;
  const gateway = createGateway({
    upstreams: { auth: authUrl, data: dataUrl },
    ready: async () => (await ready(authUrl)) && (await ready(dataUrl)),
  });
  await new Promise<void>((resolve, reject) => {
    gateway.once("error", reject);
    gateway.listen(port, process.env.GATEWAY_HOST ?? "127.0.0.1", resolve);
  });
  gatewayClose = () => gateway.close();
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (!(await ready(base))) {
    if (Date.now() > deadline) {
      say("the services did not become ready within 60 s");
      return stop(1);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  say(`ready: ${base}/rest (data and auth API), ${base}/admin/v1 (admin API)`);
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
