/**
 * Configuration is parsed and validated once, at start-up, from the environment.
 * Each service composes its schema from the pieces here and gets a typed object.
 */
import { z } from "zod";

export const commaList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string()).min(1));

const port = z.coerce.number().int().min(0).max(65535);

export const commonConfig = {
  HOST: z.string().default("127.0.0.1"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379/"),
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
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
};

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
  ARGON2_MEMORY_KIB: z.coerce.number().int().min(1024).default(19_456),
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
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(4 * 1024 * 1024),
  SANDBOX_MEMORY_MB: z.coerce.number().int().min(8).default(32),
  SANDBOX_TIMEOUT_MS: z.coerce.number().int().min(10).default(1000),
  /** Development only: lets provider code fetch loopback addresses. */
  SANDBOX_ALLOW_LOOPBACK_FETCH: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true"),
  ARGON2_MEMORY_KIB: z.coerce.number().int().min(1024).default(19_456),
});

export type AuthConfig = z.infer<typeof authConfigSchema>;
export type DataConfig = z.infer<typeof dataConfigSchema>;

export class ConfigError extends Error {}

/** Parses `env` with `schema`; on failure lists every bad variable (values are never echoed). */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  throw new ConfigError(`Invalid configuration:\n  ${problems.join("\n  ")}`);
}
