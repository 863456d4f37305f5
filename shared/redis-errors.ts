/** Errors of the Redis client (ioredis) that mean "Redis cannot serve this right now" → 503/5031. */
import { type ApiError, errors } from "./errors.ts";

/** Replies and client errors of an unreachable Redis or of a failover or resharding under way. */
export function isRedisUnavailable(err: unknown): boolean {
  const { name, message = "" } = (err ?? {}) as { name?: string; message?: string };
  return (
    name === "ClusterAllFailedError" ||
    name === "MaxRetriesPerRequestError" ||
    /^(CLUSTERDOWN|TRYAGAIN|READONLY|LOADING|MASTERDOWN|NOREPLICAS)\b/.test(message) ||
    /Connection is closed|Failed to refresh slots cache|None of startup nodes is available|All sentinels are unreachable|Stream isn't writeable|Too many Cluster redirections/.test(
      message,
    )
  );
}

export function translateRedisError(err: unknown): ApiError | undefined {
  return isRedisUnavailable(err) ? errors.unavailable("A data store", err) : undefined;
}
