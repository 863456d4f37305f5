/**
 * The platform under test, started the way `make run` starts it
 * (services/dev-stack/src/stack.ts): a FerretDB of its own in a temporary
 * DATA_DIR (or MONGO_URL), the machine's Redis (or REDIS_URL) with a key
 * prefix of its own, the data and auth services as child processes running
 * their real main.ts, and the edge in front (nginx rendered from the routing table, as
 * `make run` starts it: services/dev-stack/src/edge.ts). Everything it started or wrote
 * is removed by close(): the processes, the temporary directory, the Redis keys
 * under its prefix, and its databases when MONGO_URL points at a shared server.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import mongoose from "mongoose";
import { type Edge, startEdge } from "../../../services/dev-stack/src/edge.ts";
import {
  findOrStartMongo,
  findOrStartRedis,
  freePort,
  type StartedStore,
} from "../../../services/dev-stack/src/stores.ts";
import { dataConfigSchema } from "../../../shared/config/config.ts";
import type { CpuGroups } from "./cpu.ts";
import { type NodeChild, startNode } from "./processes.ts";

export const repoRoot = path.resolve(import.meta.dirname, "../../..");

export interface StackOptions {
  /** Extra node flags for the data service (e.g. --cpu-prof). */
  dataNodeArgs?: string[];
  log: (line: string) => void;
}

export interface Stack {
  /** The edge: the one base URL clients use. */
  baseUrl: string;
  /** The data service itself (no edge hop). */
  dataUrl: string;
  authUrl: string;
  adminToken: string;
  mongoUrl: string;
  redisUrl: string;
  redisPrefix: string;
  /** The environment the data service runs with (for bench-only variants of it). */
  dataEnv: NodeJS.ProcessEnv;
  /** The node flags the data service runs with (for bench-only data processes: --cpu-prof too). */
  dataNodeArgs: string[];
  data: NodeChild;
  /** The processes whose CPU a row reports: the edge (nginx), the data and the auth service, and the store when the bench started it. */
  cpuGroups: CpuGroups;
  /** Starts a bench-only server script (it must answer GET /readyz) in a child process. */
  startServer(name: string, script: string, env: NodeJS.ProcessEnv, nodeArgs?: string[]): Promise<NodeChild>;
  close(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const { log } = options;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "tessera-bench-"));
  const id = randomBytes(3).toString("hex");
  const stores: StartedStore[] = [];
  const children: NodeChild[] = [];
  let edge: Edge | undefined;
  const redisPrefix = `tessera-bench:${id}:`;
  const dbPrefix = `b${id}_`;
  const metaDb = `${dbPrefix}meta`;
  let closed = false;
  let redisUrl = "";

  const close = async () => {
    if (closed) return;
    closed = true;
    await edge?.stop();
    await Promise.all(children.reverse().map((c) => c.stop()));
    await cleanRedis(redisUrl, redisPrefix).catch((err) => log(`could not clean Redis: ${err}`));
    if (process.env.MONGO_URL)
      await dropDatabases(process.env.MONGO_URL, dbPrefix).catch((err) =>
        log(`could not drop the bench databases: ${err}`),
      );
    await Promise.all(stores.map((s) => s.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    const mongo = await findOrStartMongo(process.env, dataDir, (line) => log(line));
    stores.push(mongo);
    const redis = await findOrStartRedis(process.env, dataDir);
    stores.push(redis);
    redisUrl = redis.url;
    const adminToken = randomBytes(24).toString("base64url");
    const serviceToken = randomBytes(24).toString("base64url");
    const common: NodeJS.ProcessEnv = {
      ...process.env,
      HOST: "127.0.0.1",
      REDIS_URL: redis.url,
      REDIS_PREFIX: redisPrefix,
      ADMIN_TOKEN: adminToken,
      SERVICE_TOKEN: serviceToken,
      LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
      // The production default (OWASP minimum: 19 MiB, t=2, p=1), whatever the caller's environment says.
      ARGON2_MEMORY_KIB: "19456",
      // As stack.ts: the edge (127.0.0.1) is the one trusted proxy.
      TRUSTED_PROXIES: "127.0.0.1",
    };
    const [authPort, dataPort, edgePort] = [await freePort(), await freePort(), await freePort()];
    const dataEnv: NodeJS.ProcessEnv = {
      ...common,
      MONGO_URL: mongo.url,
      META_DB: metaDb,
      TENANT_DB_PREFIX: dbPrefix,
      // As production should: webhook secrets sealed (store/secret-box.ts).
      SECRETS_KEY: randomBytes(32).toString("base64"),
      // Webhooks are delivered only by the scenario that measures them (its own data service).
      WEBHOOK_DELIVERY: "false",
    };
    const dataUrl = `http://127.0.0.1:${dataPort}`;
    const authUrl = `http://127.0.0.1:${authPort}`;
    const baseUrl = `http://127.0.0.1:${edgePort}`;
    const start = async (
      name: string,
      script: string,
      port: number,
      env: NodeJS.ProcessEnv,
      nodeArgs: string[] = [],
    ) => {
      const child = await startNode({
        name,
        script: path.resolve(repoRoot, script),
        url: `http://127.0.0.1:${port}`,
        env: { ...env, PORT: String(port) },
        nodeArgs,
      });
      children.push(child);
      return child;
    };
    // As stack.ts: the data service needs --no-node-snapshot (isolated-vm).
    const dataNodeArgs = ["--no-node-snapshot", ...(options.dataNodeArgs ?? [])];
    const [data, auth] = await Promise.all([
      start("data service", "services/data/src/main.ts", dataPort, dataEnv, dataNodeArgs),
      start("auth service", "services/auth/src/main.ts", authPort, { ...common, DATA_SERVICE_URL: dataUrl }),
    ]);
    // As `make run` starts it: one worker per core.
    edge = await startEdge(path.join(dataDir, "edge"), {
      port: edgePort,
      upstreams: { auth: [`127.0.0.1:${authPort}`], data: [`127.0.0.1:${dataPort}`] },
      maxBodyBytes: dataConfigSchema.shape.MAX_BODY_BYTES.parse(dataEnv.MAX_BODY_BYTES),
      workers: "auto",
    });
    mkdirSync(path.join(repoRoot, ".bench"), { recursive: true });
    log(
      `stack up: edge ${baseUrl}, data ${dataUrl}, auth ${authUrl}; ` +
        `MongoDB ${process.env.MONGO_URL ? "MONGO_URL" : `FerretDB in ${dataDir}`}; ` +
        `Redis ${redis.url} prefix ${redisPrefix}`,
    );
    return {
      baseUrl,
      dataUrl,
      authUrl,
      adminToken,
      mongoUrl: mongo.url,
      redisUrl,
      redisPrefix,
      dataEnv,
      dataNodeArgs,
      data: data!,
      cpuGroups: {
        edge: edge.pid,
        data: data!.process.pid,
        auth: auth!.process.pid,
        store: mongo.pid,
        redis: await localRedisPid(redis.url),
      },
      async startServer(name: string, script: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []) {
        return start(name, script, await freePort(), env, nodeArgs);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Removes every Redis key under the bench's prefix (key records live for days otherwise). */
async function cleanRedis(url: string, prefix: string): Promise<void> {
  if (!url) return;
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

async function dropDatabases(url: string, prefix: string): Promise<void> {
  const connection = await mongoose.createConnection(url, { serverSelectionTimeoutMS: 5000 }).asPromise();
  try {
    const client = connection.getClient();
    const { databases } = await client.db("admin").command({ listDatabases: 1, nameOnly: true });
    for (const { name } of databases as { name: string }[]) {
      if (name.startsWith(prefix)) await client.db(name).dropDatabase();
    }
  } finally {
    await connection.close();
  }
}

/**
 * The pid of the Redis server at `url` when it runs on this machine (its INFO names a process
 * this machine has), so that a row counts the CPU Redis spent on it too; undefined otherwise.
 */
async function localRedisPid(url: string): Promise<number | undefined> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const pid = Number((await client.info("server")).match(/^process_id:(\d+)/m)?.[1]);
    return Number.isInteger(pid) && existsSync(`/proc/${pid}/stat`) ? pid : undefined;
  } finally {
    client.disconnect();
  }
}
