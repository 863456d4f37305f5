/**
 * What webhook delivery in one process is given (hooks/dispatcher.ts): its store, the projects'
 * models, its settings (from the configuration), the sealing key, metrics and logger.
 */
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
