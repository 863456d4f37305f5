/**
 * What webhook delivery in one process is given (hooks/dispatcher.ts): its store, the projects'
 * models, its settings (from the configuration: `dispatchTiming`), the sealing key, its metrics
 * (`dispatchMetrics`) and logger.
 */
import type { DataConfig } from "../../../../shared/config/config.ts";
import type { Metrics } from "../../../../shared/http/metrics.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { ProjectModel } from "../domain/model/project-model.ts";
import type { SecretBox } from "../store/secret-box.ts";
import type { WebhookStore } from "../store/webhook-store.ts";
import type { Backoff } from "./backoff.ts";
import type { CircuitPolicy } from "./circuit.ts";

export interface DispatchTiming {
  /** Attempts the process sends at once (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** Of them, one account's at most (WEBHOOK_ACCOUNT_CONCURRENCY). */
  accountConcurrency: number;
  /** Attempts one subscription has under way in the process (WEBHOOK_SUBSCRIPTION_CONCURRENCY). */
  subscriptionConcurrency: number;
  /** When a subscription's circuit opens, and for how long. */
  circuit: CircuitPolicy;
  timeoutMs: number;
  pollMs: number;
  claimIdleMs: number;
  retryWindowMs: number;
  backoff: Backoff;
  logLength: number;
}

export interface DispatchMetrics {
  /** One delivery attempt of a subscription of `account`'s `project`. */
  attempt(
    outcome: "delivered" | "failed" | "dead",
    latencyMs: number,
    where: { account: string; project: string },
  ): void;
  /** Events the feed no longer had when their delivery was due (trimmed before they were read). */
  lost(events: number): void;
}

export interface DispatcherDeps {
  store: WebhookStore;
  /** The compiled project (tables and columns for filters), null when it does not exist. */
  project(account: string, name: string): Promise<ProjectModel | null>;
  timing: DispatchTiming;
  /** SANDBOX_ALLOW_LOOPBACK_FETCH. */
  allowLoopback: boolean;
  /** Opens the stored signing secrets (SECRETS_KEY). */
  secrets: SecretBox;
  metrics: DispatchMetrics;
  logger: Logger;
  now?: () => number;
}

/** The settings of webhook delivery (WEBHOOK_*), as the configuration gives them. */
export function dispatchTiming(config: DataConfig): DispatchTiming {
  return {
    concurrency: config.WEBHOOK_CONCURRENCY,
    accountConcurrency: config.WEBHOOK_ACCOUNT_CONCURRENCY,
    subscriptionConcurrency: config.WEBHOOK_SUBSCRIPTION_CONCURRENCY,
    circuit: {
      timeouts: config.WEBHOOK_CIRCUIT_TIMEOUTS,
      // Doubled up to the retries' cap, never below its own first cool-down.
      backoff: {
        baseMs: config.WEBHOOK_CIRCUIT_OPEN_MS,
        capMs: Math.max(config.WEBHOOK_BACKOFF_CAP_MS, config.WEBHOOK_CIRCUIT_OPEN_MS),
      },
    },
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    pollMs: config.WEBHOOK_POLL_MS,
    claimIdleMs: config.WEBHOOK_CLAIM_IDLE_MS,
    retryWindowMs: config.WEBHOOK_RETRY_WINDOW_SECONDS * 1000,
    backoff: { baseMs: config.WEBHOOK_BACKOFF_BASE_MS, capMs: config.WEBHOOK_BACKOFF_CAP_MS },
    logLength: config.WEBHOOK_LOG_LENGTH,
  };
}

/**
 * The webhook deliveries' metrics (docs/operations.md); `countInUsage` counts each attempt in its
 * account's usage (`hook.<outcome>`).
 */
export function dispatchMetrics(
  metrics: Metrics,
  countInUsage: (account: string, name: string) => void,
): DispatchMetrics {
  const attempts = metrics.counter(
    "tessera_webhook_attempts_total",
    "Webhook delivery attempts by outcome (delivered, failed: retried later, dead: parked as a dead letter)",
    ["outcome"],
    { outcome: ["delivered", "failed", "dead"] },
  );
  const lost = metrics.counter(
    "tessera_webhook_events_trimmed_total",
    "Change-feed events trimmed (FEED_MAX_LENGTH, FEED_MAX_AGE_SECONDS) before a webhook subscription read them",
    [],
  );
  return {
    attempt: (outcome, _latencyMs, where) => {
      attempts.inc({ outcome });
      countInUsage(where.account, `hook.${outcome}`);
    },
    lost: (events) => lost.inc(events),
  };
}
