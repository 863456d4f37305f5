/**
 * The one place Redis connections are made, for every topology (REDIS_MODE):
 *  - single: one server at REDIS_URL;
 *  - sentinel: the primary the sentinels name (ioredis asks them and follows a failover);
 *  - cluster: a Redis Cluster found from a few seed nodes (ioredis follows the slot map).
 * A service makes one command client, and the data service one subscriber client for pub/sub
 * (a subscribed connection can run nothing else).
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";

export type RedisClient = Redis | Cluster;

export interface RedisTopology {
  REDIS_MODE: "single" | "sentinel" | "cluster";
  REDIS_URL: string;
  REDIS_SENTINELS?: string[] | undefined;
  REDIS_SENTINEL_MASTER?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
  REDIS_SENTINEL_PASSWORD?: string | undefined;
  REDIS_TLS: boolean;
  REDIS_CLUSTER_NODES?: string[] | undefined;
}

export type ClientPurpose = "command" | "subscriber";

/** A failover should cost about as long as the topology takes to elect a new primary, not more. */
const reconnectDelayMs = (attempt: number) => Math.min(attempt * 50, 500);

function hostAndPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(":");
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ""), port: Number(address.slice(at + 1)) };
}

function connectionOptions(topology: RedisTopology, purpose: ClientPurpose): RedisOptions {
  return {
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    // A subscribed connection may not run INFO, which the ready check sends on reconnect.
    enableReadyCheck: purpose === "command",
    retryStrategy: reconnectDelayMs,
    // A primary demoted by a failover answers writes with READONLY: reconnect (to the new one) and resend.
    reconnectOnError: (err) => (err.message.startsWith("READONLY") ? 2 : false),
    ...(topology.REDIS_PASSWORD ? { password: topology.REDIS_PASSWORD } : {}),
    ...(topology.REDIS_TLS ? { tls: {} } : {}),
  };
}

export function createRedisClient(topology: RedisTopology, purpose: ClientPurpose = "command"): RedisClient {
  const options = connectionOptions(topology, purpose);
  switch (topology.REDIS_MODE) {
    case "single": {
      const { password: _password, tls: _tls, ...fromUrl } = options;
      return new Redis(topology.REDIS_URL, fromUrl);
    }
    case "sentinel":
      return new Redis({
        ...options,
        sentinels: (topology.REDIS_SENTINELS ?? []).map(hostAndPort),
        name: topology.REDIS_SENTINEL_MASTER ?? "",
        role: "master",
        sentinelRetryStrategy: reconnectDelayMs,
        // Not ioredis' failover detector: its sentinel connections outlive quit() (they reconnect for
        // ever once the sentinels are gone). A switch is noticed when the old primary fails or, when it
        // was demoted rather than lost, answers a write with READONLY (reconnectOnError above).
        failoverDetector: false,
        ...(topology.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: topology.REDIS_SENTINEL_PASSWORD } : {}),
        ...(topology.REDIS_TLS ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
      });
    case "cluster": {
      const { maxRetriesPerRequest: _retries, enableOfflineQueue, ...redisOptions } = options;
      const clusterOptions: ClusterOptions = {
        redisOptions,
        enableOfflineQueue,
        enableReadyCheck: purpose === "command",
        scaleReads: "master",
        clusterRetryStrategy: reconnectDelayMs,
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        retryDelayOnTryAgain: 100,
        maxRedirections: 16,
        slotsRefreshTimeout: 2000,
      };
      return new Cluster((topology.REDIS_CLUSTER_NODES ?? []).map(hostAndPort), clusterOptions);
    }
  }
}

/**
 * Waits until at least one replica has every write this client sent the servers owning `keys`
 * (at most `timeoutMs`); nothing to wait for when that primary has no replica. WAIT concerns one
 * connection, so on a Cluster it goes to the connection that wrote the key: the slot's primary.
 * Resolves to false when some primary with replicas had no acknowledgement within the time.
 */
export async function waitForReplica(
  client: RedisClient,
  keys: string[],
  timeoutMs = 1000,
): Promise<boolean> {
  if (keys.length === 0) return true;
  const servers =
    client instanceof Cluster
      ? new Set(await Promise.all(keys.map((key) => primaryOwning(client, key))))
      : new Set([client]);
  const acknowledged = await Promise.all(
    [...servers].map(async (server) => {
      const role = (await server.role()) as [string, number, unknown[]?];
      const replicas = role[0] === "master" ? (role[2]?.length ?? 0) : 0;
      return replicas === 0 || (await server.wait(1, timeoutMs)) >= 1;
    }),
  );
  return acknowledged.every(Boolean);
}

async function primaryOwning(cluster: Cluster, key: string): Promise<Redis> {
  const slot = Number(await cluster.call("CLUSTER", "KEYSLOT", key));
  const owner = cluster.slots[slot]?.[0];
  const node = cluster.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === owner);
  if (!node) throw new Error("no primary owns the key's slot right now");
  return node;
}
