/**
 * Configuration is parsed and validated once, at start-up, from the environment.
 * Each service composes its schema from the pieces here and gets a typed object.
 */
import { z } from "zod";
import { compileTrustedProxies } from "../http/forwarding.ts";
import type { PlanLimits } from "../quotas/plans.ts";
import { plansSetting, UNLIMITED_PLAN } from "../quotas/plans.ts";
import type { RedisTopology } from "../redis/clients.ts";

/** The non-empty entries of a comma-separated value, trimmed. */
const splitList = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

/** A list its type knows to be non-empty (after `.min(1)` said so): the current entry first. */
const currentFirst = ([current = "", ...older]: string[]): [string, ...string[]] => [current, ...older];

const nonEmptyList = z.string().transform(splitList).pipe(z.array(z.string()).min(1));

export const commaList = nonEmptyList.transform(currentFirst);

const port = z.coerce.number().int().min(0).max(65535);

/** Comma-separated keys of 32 random bytes each, base64 (`openssl rand -base64 32`), current first. */
const secretsKeys = z
  .string()
  .transform(splitList)
  .pipe(
    z.array(z.string().regex(/^[A-Za-z0-9+/_-]{43}=?$/, "each key must be 32 random bytes, base64")).min(1),
  )
  .transform((keys) => keys.map((k) => Buffer.from(k, "base64")));

/** Comma-separated addresses, CIDR ranges or `loopback`/`linklocal`/`uniquelocal`; empty trusts no proxy. */
export const trustedProxiesSetting = z
  .string()
  .default("")
  .transform(splitList)
  .superRefine((entries, ctx) => {
    entries.forEach((entry, i) => {
      try {
        compileTrustedProxies([entry]);
      } catch {
        ctx.addIssue({
          code: "custom",
          message: `entry ${i + 1} is not an IP address, a CIDR range, or loopback, linklocal or uniquelocal`,
        });
      }
    });
  });

const hostPort = z
  .string()
  .regex(/^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9A-Fa-f:.]+\]:\d{1,5}$/, "must be host:port");
const hostPortList = nonEmptyList.pipe(z.array(hostPort));
const flag = z
  .enum(["true", "false"])
  .default("false")
  .transform((v) => v === "true");

/**
 * How the services reach Redis (shared/redis/clients.ts): one server (`REDIS_URL`), a primary
 * watched by Sentinel (`REDIS_SENTINELS` + `REDIS_SENTINEL_MASTER`), or a Redis Cluster
 * (`REDIS_CLUSTER_NODES`, any few of its nodes). Which settings a mode needs is checked by
 * `parseConfig` (redisTopologyProblems).
 */
export const redisTopologyConfig = {
  REDIS_MODE: z.enum(["single", "sentinel", "cluster"]).default("single"),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379/"),
  REDIS_SENTINELS: hostPortList.optional(),
  REDIS_SENTINEL_MASTER: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .optional(),
  /** Password of the Redis servers (sentinel and cluster modes; in single mode it is part of REDIS_URL). */
  REDIS_PASSWORD: z.string().min(1).optional(),
  REDIS_SENTINEL_PASSWORD: z.string().min(1).optional(),
  /** TLS to the Redis servers and sentinels (sentinel and cluster modes; single mode: a rediss:// URL). */
  REDIS_TLS: flag,
  REDIS_CLUSTER_NODES: hostPortList.optional(),
};

type RedisTopologySettings = Pick<
  RedisTopology,
  "REDIS_MODE" | "REDIS_SENTINELS" | "REDIS_SENTINEL_MASTER" | "REDIS_CLUSTER_NODES"
>;

/** The settings a Redis mode cannot do without that are missing, as `NAME: problem` lines. */
export function redisTopologyProblems(config: Partial<RedisTopologySettings>): string[] {
  const needed: (keyof RedisTopologySettings)[] =
    config.REDIS_MODE === "sentinel"
      ? ["REDIS_SENTINELS", "REDIS_SENTINEL_MASTER"]
      : config.REDIS_MODE === "cluster"
        ? ["REDIS_CLUSTER_NODES"]
        : [];
  return needed
    .filter((name) => config[name] === undefined)
    .map((name) => `${name}: required when REDIS_MODE=${config.REDIS_MODE}`);
}

type WebhookTimings = Pick<
  DataConfig,
  "WEBHOOK_TIMEOUT_MS" | "WEBHOOK_CLAIM_IDLE_MS" | "WEBHOOK_BACKOFF_BASE_MS" | "WEBHOOK_BACKOFF_CAP_MS"
>;

/** Webhook timings that contradict each other (a data service's; absent settings: none). */
export function webhookProblems(config: Partial<WebhookTimings>): string[] {
  const problems: string[] = [];
  const { WEBHOOK_TIMEOUT_MS: timeout, WEBHOOK_CLAIM_IDLE_MS: claim } = config;
  if (timeout !== undefined && claim !== undefined && claim <= timeout)
    problems.push(
      "WEBHOOK_CLAIM_IDLE_MS: must be longer than WEBHOOK_TIMEOUT_MS (a delivery under way is not taken over)",
    );
  const { WEBHOOK_BACKOFF_BASE_MS: base, WEBHOOK_BACKOFF_CAP_MS: cap } = config;
  if (base !== undefined && cap !== undefined && cap < base)
    problems.push("WEBHOOK_BACKOFF_CAP_MS: must be at least WEBHOOK_BACKOFF_BASE_MS");
  return problems;
}

export const commonConfig = {
  HOST: z.string().default("127.0.0.1"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ...redisTopologyConfig,
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]{1,64}$/)
    .default("tessera:"),
  AUTH_SCHEMES: commaList.default(["Tessera", "CALiveAPICreator", "Espresso"]),
  /** Comma-separated: current token first; more than one lets operators rotate without downtime. */
  ADMIN_TOKEN: commaList,
  SERVICE_TOKEN: commaList,
  /** Absolute URL clients use to reach the platform (for @metadata.href); defaults to the request's own host. */
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** Proxies whose X-Forwarded-For/-Host/-Proto are believed (the Ingress controller; the edge). */
  TRUSTED_PROXIES: trustedProxiesSetting,
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /** Request rate limits per account and per API key (token buckets in Redis; one more round trip per request). */
  RATE_LIMITS: flag,
  /** Requests of one account (all its projects, keys and logins) per window; 0 = none (an account may have its own). */
  RATE_LIMIT_ACCOUNT: z.coerce.number().int().min(0).default(6000),
  /** Requests with one API key per window; 0 = none (an account may have its own). */
  RATE_LIMIT_KEY: z.coerce.number().int().min(0).default(1200),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** Plans of limits by name, as JSON (docs/operations.md#plans-and-quotas); more come from the admin API. */
  PLANS: plansSetting,
  /** The plan of an account that was given none: `unlimited` (built in: no limits) or one of PLANS. */
  DEFAULT_PLAN: z.string().default(UNLIMITED_PLAN),
  /** How long a process keeps an account's effective limits before reading them again. */
  PLAN_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(2000),
};

/** DEFAULT_PLAN must be a plan the configuration knows (the admin API's plans come later). */
export function planProblems(config: { PLANS?: Map<string, PlanLimits>; DEFAULT_PLAN?: string }): string[] {
  const { PLANS: plans, DEFAULT_PLAN: plan } = config;
  if (plans === undefined || plan === undefined || plan === UNLIMITED_PLAN || plans.has(plan)) return [];
  return [`DEFAULT_PLAN: names no plan of PLANS (nor "${UNLIMITED_PLAN}")`];
}

/** The plan settings of the configuration (shared/quotas/plan-store.ts). */
export function planSettings(config: {
  PLANS: Map<string, PlanLimits>;
  DEFAULT_PLAN: string;
  PLAN_CACHE_MS: number;
}) {
  return { configured: config.PLANS, defaultPlan: config.DEFAULT_PLAN, cacheMs: config.PLAN_CACHE_MS };
}

/** The request rate limits of the configuration; undefined when they are off. */
export function rateLimitSettings(config: {
  RATE_LIMITS: boolean;
  RATE_LIMIT_ACCOUNT: number;
  RATE_LIMIT_KEY: number;
  RATE_LIMIT_WINDOW_SECONDS: number;
}): { account: number; key: number; windowSeconds: number } | undefined {
  if (!config.RATE_LIMITS) return undefined;
  return {
    account: config.RATE_LIMIT_ACCOUNT,
    key: config.RATE_LIMIT_KEY,
    windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
  };
}

export const authConfigSchema = z.object({
  ...commonConfig,
  PORT: port.default(8081),
  DATA_SERVICE_URL: z.string().url().default("http://127.0.0.1:8082"),
  KEY_RETENTION_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .default(7 * 24 * 3600),
  /** Failed logins per account+project+username before the lock-out starts. */
  LOGIN_FAILURES_BEFORE_LOCKOUT: z.coerce.number().int().min(1).default(5),
  LOGIN_LOCKOUT_BASE_SECONDS: z.coerce.number().int().min(1).default(1),
  LOGIN_LOCKOUT_MAX_SECONDS: z.coerce.number().int().min(1).default(900),
  /** Second line of defence: failed logins per client address per hour. */
  LOGIN_FAILURES_PER_ADDRESS_PER_HOUR: z.coerce.number().int().min(1).default(1000),
  /** How long a login waits for other logins of the same identity to be answered when all N places are in flight. */
  LOGIN_QUEUE_WAIT_SECONDS: z.coerce.number().int().min(0).default(10),
  ARGON2_MEMORY_KIB: z.coerce.number().int().min(1024).default(19_456),
  /** Lifetime of an account administrator's key (from the account's @authentication). */
  ADMIN_KEY_LIFETIME_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(3600),
});

export const dataConfigSchema = z.object({
  ...commonConfig,
  PORT: port.default(8082),
  MONGO_URL: z.string().regex(/^mongodb(\+srv)?:\/\//, "must be a mongodb:// or mongodb+srv:// URL"),
  META_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,38}$/)
    .default("tessera_meta"),
  /** Prefix of every tenant database name (one database per account). */
  TENANT_DB_PREFIX: z
    .string()
    .regex(/^[a-z0-9_]{0,16}$/)
    .default("tn_"),
  QUERY_TIMEOUT_MS: z.coerce.number().int().min(1).default(5000),
  /** Without transactions: how long a failed write retries its undo before leaving it to recovery. */
  WRITE_UNDO_WINDOW_MS: z.coerce.number().int().min(0).default(15_000),
  /** Lease of a write's intent and row locks (renewed while the writer works; after a crash, rows wait this long). */
  WRITE_LEASE_MS: z.coerce.number().int().min(300).default(15_000),
  /** How often each data-service process completes abandoned write intents and sweeps the feed outbox. */
  WRITE_RECOVERY_INTERVAL_MS: z.coerce.number().int().min(50).default(5000),
  /**
   * How long a committed write's answer waits for a Redis replica to have the step that completed it
   * (docs/realtime.md#failover); 0: it does not wait. Not on a Redis Cluster.
   */
  WRITE_REPLICA_WAIT_MS: z.coerce.number().int().min(0).default(1000),
  /**
   * Keys that seal the secrets the platform keeps to read back (webhook signing secrets), current
   * first: a stored secret names the key that sealed it, so a new key goes in front of the old ones.
   * Unset: kept as they are (a warning at start-up).
   */
  SECRETS_KEY: secretsKeys.optional(),
  /**
   * Whether an import of a Live API Creator project may keep the export's API key values (its clients
   * hold them; docs/migrating-from-lac.md). false: every imported key gets a new value.
   */
  LAC_IMPORT_KEEP_KEY_VALUES: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /** The change feed (docs/realtime.md): every committed write appends its row changes to the project's stream. */
  FEED_ENABLED: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /** About how many events a project's feed keeps (older ones are trimmed, in whole stream nodes). */
  FEED_MAX_LENGTH: z.coerce.number().int().min(100).default(100_000),
  /** About how long a project's feed keeps an event (older ones are trimmed on each append). */
  FEED_MAX_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(24 * 3600),
  /** Live queries (SSE) open at once per account, in each data-service process (429 beyond). */
  LIVE_MAX_STREAMS_PER_ACCOUNT: z.coerce.number().int().min(1).default(1000),
  /** Live queries open at once per API key, in each data-service process (429 beyond). */
  LIVE_MAX_STREAMS_PER_KEY: z.coerce.number().int().min(1).default(10),
  /** How often a live query sends a heartbeat (an SSE comment line). */
  LIVE_HEARTBEAT_MS: z.coerce.number().int().min(100).default(15_000),
  /** How often a live query checks its key again (a revoked or expired key's stream ends within this). */
  LIVE_KEY_CHECK_MS: z.coerce.number().int().min(50).default(500),
  /** Bytes a live query may have waiting for a slow client before it is cut (the client resumes). */
  LIVE_MAX_BUFFER_BYTES: z.coerce
    .number()
    .int()
    .min(16 * 1024)
    .default(1024 * 1024),
  /**
   * Events a live query holds back while it catches up (a resume, a snapshot) or re-derives its
   * view after a definition change, before it is cut (the client resumes from where it was cut).
   */
  LIVE_MAX_HELD_EVENTS: z.coerce.number().int().min(1).default(10_000),
  /** Whether this process delivers webhooks (docs/webhooks.md); every process serves the admin API for them. */
  WEBHOOK_DELIVERY: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /** Webhooks (docs/webhooks.md): deliveries each data-service process sends at once, all subscriptions together. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  /** Of them, one account's at most (all its subscriptions; no more than WEBHOOK_CONCURRENCY). */
  WEBHOOK_ACCOUNT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(32),
  /** Attempts one subscription has under way at once in one process (taken, waiting for a turn or an answer). */
  WEBHOOK_SUBSCRIPTION_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16),
  /** Attempts of one subscription in a row without an answer in time that open its circuit (it is backed off as a whole). */
  WEBHOOK_CIRCUIT_TIMEOUTS: z.coerce.number().int().min(1).max(1000).default(5),
  /** An open circuit's first cool-down before a probe; doubled each time it opens again, up to WEBHOOK_BACKOFF_CAP_MS (or this, when larger). */
  WEBHOOK_CIRCUIT_OPEN_MS: z.coerce.number().int().min(10).default(30_000),
  /** Webhook subscriptions one project may have (a POST beyond is refused, 409/4092). */
  WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT: z.coerce.number().int().min(1).max(100_000).default(100),
  /** How long one delivery may take (connect, send, answer) before it counts as failed. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** The first retry's delay; each further one doubles it, up to WEBHOOK_BACKOFF_CAP_MS. */
  WEBHOOK_BACKOFF_BASE_MS: z.coerce.number().int().min(10).default(5000),
  WEBHOOK_BACKOFF_CAP_MS: z.coerce
    .number()
    .int()
    .min(10)
    .default(3600 * 1000),
  /** How long an event is retried after its first failed attempt before it is parked as a dead letter. */
  WEBHOOK_RETRY_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(24 * 3600),
  /** How often each process looks for new events when the last look found none. */
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
  /** A delivery pending this long without an answer belongs to a dead process: another one takes it over. */
  WEBHOOK_CLAIM_IDLE_MS: z.coerce.number().int().min(100).default(60_000),
  /** Entries kept in each subscription's delivery log. */
  WEBHOOK_LOG_LENGTH: z.coerce.number().int().min(10).max(100_000).default(1000),
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(4 * 1024 * 1024),
  /**
   * Memory (MiB) a process gives the compiled models of the projects used most recently (an
   * estimate per model, from its definition's size): beyond it, the least recently used are
   * compiled again when next used. The default suits a 512 MiB pod.
   */
  PROJECT_CACHE_MIB: z.coerce.number().int().min(1).max(65_536).default(96),
  /**
   * Memory (MiB) a process gives the login providers of the projects used most recently, each kind
   * (custom JavaScript, oidc with its issuer's cached keys) its own: beyond it, the least recently
   * used are made again (an oidc one fetches its issuer's keys again) when next used.
   */
  PROVIDER_CACHE_MIB: z.coerce.number().int().min(1).max(65_536).default(32),
  SANDBOX_MEMORY_MB: z.coerce.number().int().min(8).default(32),
  SANDBOX_TIMEOUT_MS: z.coerce.number().int().min(10).default(1000),
  /** Sandbox host processes (child processes running the isolates); programs are spread over them by key. */
  SANDBOX_PROCESSES: z.coerce.number().int().min(1).max(32).default(2),
  /** CPU priority (nice value) of the sandbox processes: customer JavaScript yields to the service's own work. */
  SANDBOX_NICENESS: z.coerce.number().int().min(0).max(19).default(10),
  /** Sandbox calls of one account (all its projects) that run at once in one data-service process. */
  SANDBOX_ACCOUNT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(4),
  /** Sandbox calls of all accounts together that run at once in one data-service process. */
  SANDBOX_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(32),
  /** Isolate CPU time (ms) one account's JavaScript may use per window, per data-service process. */
  SANDBOX_ACCOUNT_CPU_MS: z.coerce.number().int().min(1).default(15_000),
  /** The sliding window of SANDBOX_ACCOUNT_CPU_MS. */
  SANDBOX_ACCOUNT_CPU_WINDOW_MS: z.coerce.number().int().min(1000).default(60_000),
  /** Sandbox calls of one account that may wait for a turn (429 beyond). */
  SANDBOX_ACCOUNT_QUEUE: z.coerce.number().int().min(0).default(100),
  /** `tessera.get` reads one call of a JavaScript resource or event may make. */
  SANDBOX_READS_PER_CALL: z.coerce.number().int().min(1).max(1000).default(20),
  /** Development only: lets provider code fetch loopback addresses. */
  SANDBOX_ALLOW_LOOPBACK_FETCH: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true"),
  ARGON2_MEMORY_KIB: z.coerce.number().int().min(1024).default(19_456),
  /**
   * Metering (docs/operations.md#usage-and-metering): requests, sandbox CPU, webhook deliveries and
   * live-stream time per account and project, and the store's statistics. Off: no usage is
   * recorded (storage quotas then go by the last measurement, and row limits are still enforced).
   */
  USAGE_METERING: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  /** How often each process adds its counted usage to the accounts' series in Redis. */
  USAGE_FLUSH_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  /**
   * How often the store's statistics (bytes and rows of the tables of the accounts written since,
   * and of USAGE_SWEEP_ACCOUNTS more in turn) are read, by one process.
   */
  USAGE_SAMPLE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** Accounts a storage round measures beyond those written, in turn (what changed without a write; 0: none). */
  USAGE_SWEEP_ACCOUNTS: z.coerce.number().int().min(0).max(100_000).default(50),
  /** How long minute buckets of the usage series are kept (hour buckets: USAGE_RETENTION_DAYS). */
  USAGE_MINUTE_RETENTION_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 14)
    .default(48),
  USAGE_RETENTION_DAYS: z.coerce.number().int().min(1).max(3660).default(400),
});

/** The console's static server: no stores, no secrets (the console talks to the APIs from the browser). */
export const consoleConfigSchema = z.object({
  HOST: commonConfig.HOST,
  LOG_LEVEL: commonConfig.LOG_LEVEL,
  SHUTDOWN_GRACE_MS: commonConfig.SHUTDOWN_GRACE_MS,
  PORT: port.default(8083),
});

export type AuthConfig = z.infer<typeof authConfigSchema>;
export type DataConfig = z.infer<typeof dataConfigSchema>;
export type ConsoleConfig = z.infer<typeof consoleConfigSchema>;

export class ConfigError extends Error {}

/** Parses `env` with `schema`; on failure lists every bad variable (values are never echoed). */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const result = schema.safeParse(env);
  const problems = result.success
    ? [
        ...redisTopologyProblems(result.data as Partial<RedisTopologySettings>),
        ...webhookProblems(result.data as Partial<WebhookTimings>),
        ...planProblems(result.data as { PLANS?: Map<string, PlanLimits>; DEFAULT_PLAN?: string }),
      ]
    : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  if (result.success && problems.length === 0) return result.data;
  throw new ConfigError(`Invalid configuration:\n  ${problems.join("\n  ")}`);
}
