/**
 * Real Redis topologies on loopback for the HA tests: a Redis Cluster (created with
 * `redis-cli --cluster create`) and a primary + replica watched by three sentinels. Debian's
 * redis-server and redis-sentinel; every process is started here, on free ports, with short
 * failure timeouts (a node is declared down after about a second or two).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { freePort, stopper, tieToThisProcess, waitForPort } from "../../services/dev-stack/src/stores.ts";
import { TcpRelay } from "./tcp-relay.ts";
import { until } from "./until.ts";

const run = promisify(execFile);

export interface RedisProcess {
  port: number;
  address: string;
  child: ChildProcess;
  /** SIGKILL, as a crashed host would go. */
  kill(): void;
  stop(): Promise<void>;
}

export async function startRedisProcess(
  dir: string,
  args: string[],
  binary = "redis-server",
  configFile?: string,
  port?: number,
): Promise<RedisProcess> {
  mkdirSync(dir, { recursive: true });
  const listen = port ?? (await freePort());
  const child = spawn(
    binary,
    [
      ...(configFile ? [configFile] : []),
      "--port",
      String(listen),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      ...args,
    ],
    { stdio: "ignore" },
  );
  tieToThisProcess(child);
  await waitForPort(listen, child, binary);
  return {
    port: listen,
    address: `127.0.0.1:${listen}`,
    child,
    kill: () => child.kill("SIGKILL"),
    stop: stopper(child),
  };
}

async function ask<T>(address: string, work: (redis: Redis) => Promise<T>): Promise<T> {
  const [host, port] = address.split(":");
  const redis = new Redis(Number(port), host!, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

export interface RedisClusterProcesses {
  /** Every node's address (primaries first, as created). */
  nodes: string[];
  servers: RedisProcess[];
  /** The node serving `address` now and its role. */
  role(address: string): Promise<string>;
  stop(): Promise<void>;
}

/** A Redis Cluster of `primaries` primaries with one replica each; ready (every slot served, replicas in sync). */
export async function startRedisCluster(dir: string, primaries = 3): Promise<RedisClusterProcesses> {
  const servers: RedisProcess[] = [];
  for (let i = 0; i < primaries * 2; i++) {
    servers.push(
      await startRedisProcess(path.join(dir, `node-${i}`), [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "2000",
        "--save",
        "",
        "--appendonly",
        "no",
      ]),
    );
  }
  const nodes = servers.map((s) => s.address);
  await run("redis-cli", ["--cluster", "create", ...nodes, "--cluster-replicas", "1", "--cluster-yes"]);
  await until("cluster ready", async () => {
    for (const address of nodes) {
      const info = await ask(address, (r) => r.cluster("INFO") as Promise<string>);
      if (!/cluster_state:ok/.test(info) || !/cluster_known_nodes:(\d+)/.test(info)) return false;
      if (Number(/cluster_known_nodes:(\d+)/.exec(info)![1]) !== nodes.length) return false;
    }
    const roles = await Promise.all(nodes.map((a) => ask(a, (r) => r.role() as Promise<unknown[]>)));
    const synced = roles.filter((role) => role[0] === "slave" && role[3] === "connected");
    return synced.length === primaries;
  });
  return {
    nodes,
    servers,
    role: (address) => ask(address, async (r) => String(((await r.role()) as unknown[])[0])),
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

export interface SentinelProcesses {
  primary: RedisProcess;
  replica: RedisProcess;
  sentinels: RedisProcess[];
  sentinelAddresses: string[];
  master: string;
  /** The address the sentinels name as primary now. */
  currentPrimary(): Promise<string>;
  stop(): Promise<void>;
}

/** A primary, one replica and three sentinels (quorum 2, a primary is down after 1 s of silence). */
export async function startRedisSentinel(dir: string, master = "tessera"): Promise<SentinelProcesses> {
  const durable = ["--save", "", "--appendonly", "yes"];
  const primary = await startRedisProcess(path.join(dir, "primary"), durable);
  const replica = await startRedisProcess(path.join(dir, "replica"), [
    ...durable,
    "--replicaof",
    "127.0.0.1",
    String(primary.port),
  ]);
  await until("replica in sync", () =>
    ask(replica.address, async (r) => ((await r.role()) as unknown[])[3] === "connected"),
  );
  const sentinels: RedisProcess[] = [];
  for (let i = 0; i < 3; i++) {
    const sentinelDir = path.join(dir, `sentinel-${i}`);
    mkdirSync(sentinelDir, { recursive: true });
    const port = await freePort();
    // Sentinel rewrites its configuration file as it learns the topology: it must be its own.
    const configFile = path.join(sentinelDir, "sentinel.conf");
    writeFileSync(
      configFile,
      [
        `sentinel monitor ${master} 127.0.0.1 ${primary.port} 2`,
        `sentinel down-after-milliseconds ${master} 1000`,
        `sentinel failover-timeout ${master} 5000`,
        `sentinel parallel-syncs ${master} 1`,
        "",
      ].join("\n"),
    );
    sentinels.push(await startRedisProcess(sentinelDir, [], "redis-sentinel", configFile, port));
  }
  const sentinelAddresses = sentinels.map((s) => s.address);
  const currentPrimary = () =>
    ask(sentinelAddresses[0]!, async (r) => {
      const [host, port] = (await r.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", master)) as [string, string];
      return `${host}:${port}`;
    });
  await until("sentinels know each other and the replica", async () => {
    for (const address of sentinelAddresses) {
      const info = (await ask(address, (r) => r.call("SENTINEL", "MASTER", master))) as string[];
      const field = (name: string) => Number(info[info.indexOf(name) + 1]);
      if (field("num-other-sentinels") < 2 || field("num-slaves") < 1) return false;
    }
    return true;
  });
  return {
    primary,
    replica,
    sentinels,
    sentinelAddresses,
    master,
    currentPrimary,
    async stop() {
      await Promise.all([primary, replica, ...sentinels].map((s) => s.stop()));
    },
  };
}

/**
 * Makes the Sentinel topology's replica follow its primary through a relay on loopback, which a
 * test can stall (`hold()`: the primary can no longer reach its replica). Close it at the end.
 */
export async function replicaThroughRelay(redis: SentinelProcesses): Promise<TcpRelay> {
  const relay = new TcpRelay(redis.primary.port);
  const relayPort = await relay.listen();
  const replica = new Redis(redis.replica.port, "127.0.0.1");
  try {
    await replica.replicaof("127.0.0.1", relayPort);
    await until("the replica follows the primary through the relay", async () =>
      /master_link_status:up/.test(await replica.info("replication")),
    );
  } finally {
    replica.disconnect();
  }
  return relay;
}
