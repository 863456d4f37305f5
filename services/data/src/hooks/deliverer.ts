/**
 * One subscription's attempts in this process (docs/webhooks.md): each signed with the
 * subscription's secrets as stored when it starts (a rotation answered before applies to it),
 * posted through the egress policy, and recorded — its outcome (attempt-outcome.ts) handed back to
 * the event source, the circuit told of a time-out, the metrics counted and the delivery log written.
 */

import { SecretBoxError } from "../store/secret-box.ts";
import type { TenantStorage } from "../store/storage-names.ts";
import type { DeliveryLogEntry, WebhookProject, WebhookSubscription } from "../store/webhook-store.ts";
import { attemptOutcome } from "./attempt-outcome.ts";
import type { CircuitKeeper } from "./circuit-keeper.ts";
import type { DispatcherDeps } from "./dispatch-deps.ts";
import { type AttemptResult, postWebhook } from "./egress.ts";
import type { Item, SubscriptionEvents } from "./event-source.ts";
import { webhookHeaders } from "./signature.ts";

export class Deliverer {
  readonly #deps: DispatcherDeps;
  readonly #project: WebhookProject;
  readonly #id: string;
  readonly #circuit: CircuitKeeper;
  readonly #now: () => number;
  /** The subscription's secrets as last opened, by their stored form: opening costs more than signing. */
  readonly #opened = new Map<string, string>();
  /** The subscription's record as stored: the read that callers asking now will share (not begun yet). */
  #nextRecord: Promise<WebhookSubscription | null> | undefined;
  /** The last read of the record begun (the next one begins after it). */
  #recordRead: Promise<void> = Promise.resolve();

  constructor(deps: DispatcherDeps, project: WebhookProject, subscription: string, circuit: CircuitKeeper) {
    this.#deps = deps;
    this.#project = project;
    this.#id = subscription;
    this.#circuit = circuit;
    this.#now = deps.now ?? Date.now;
  }

  get #storage(): TenantStorage {
    return this.#project.storage;
  }

  /** One attempt: signed with the secrets as stored now, sent, its outcome recorded through `events`. */
  async deliver(item: Item, events: SubscriptionEvents): Promise<void> {
    const { timing, metrics } = this.#deps;
    // As stored now, not as the last refresh saw it: a rotation answered before this attempt signs it.
    const current = await this.#record();
    if (!current) return; // deleted: its groups and state are gone with it
    const { delivery } = item;
    const sentAt = this.#now();
    const secrets = signingSecrets((stored) => this.#open(stored), current, sentAt);
    const result: AttemptResult =
      "problem" in secrets
        ? {
            status: null,
            latencyMs: 0,
            error: `not sent: the signing secret is ${secrets.problem}`,
            timedOut: false,
          }
        : await postWebhook(
            { allowLoopback: this.#deps.allowLoopback, timeoutMs: timing.timeoutMs },
            current.url,
            webhookHeaders(secrets.open, delivery.webhookId, Math.floor(sentAt / 1000), delivery.body),
            delivery.body,
          );
    const now = this.#now();
    if (!("problem" in secrets)) await this.#circuit.attempted(result.timedOut, now);
    const outcome = attemptOutcome(delivery, item.state, result, timing, now);
    const logged = {
      at: now,
      webhookId: delivery.webhookId,
      position: delivery.position,
      attempt: outcome.attempt,
      status: result.status,
      latencyMs: result.latencyMs,
      error: result.error,
    };
    switch (outcome.kind) {
      case "settle":
        await events.settle(item);
        metrics.attempt("delivered", result.latencyMs, this.#project);
        await this.#log({ ...logged, outcome: "delivered" });
        return;
      case "park":
        await events.park(item, outcome.dead);
        metrics.attempt("dead", result.latencyMs, this.#project);
        await this.#log({ ...logged, outcome: "dead" });
        return;
      case "retry":
        await events.retry(item, outcome.state, outcome.at);
        metrics.attempt("failed", result.latencyMs, this.#project);
        await this.#log({ ...logged, outcome: "failed" });
        return;
    }
  }

  /** Events the feed trimmed before the subscription read them: counted, logged, in its delivery log. */
  async lost(events: number): Promise<void> {
    this.#deps.metrics.lost(events);
    this.#deps.logger.warn(
      { subscription: this.#id, events },
      "webhook events were trimmed from the change feed before they were delivered",
    );
    await this.#log({
      at: this.#now(),
      outcome: "lost",
      webhookId: null,
      position: null,
      attempt: 0,
      status: null,
      latencyMs: null,
      error: `${events} event(s) of the project's feed were trimmed before this subscription read them`,
    });
  }

  /** A stored secret of the subscription, opened (SecretBoxError when it does not open). */
  #open(stored: string): string {
    let plain = this.#opened.get(stored);
    if (plain === undefined) {
      plain = this.#deps.secrets.open(stored);
      // The subscription's current and previous secrets; a rotation or a new key makes others.
      if (this.#opened.size >= 4) this.#opened.clear();
      this.#opened.set(stored, plain);
    }
    return plain;
  }

  async #log(entry: DeliveryLogEntry): Promise<void> {
    await this.#deps.store.log(this.#storage, this.#id, entry, this.#deps.timing.logLength);
  }

  /**
   * The subscription as stored, read after the caller asked (so that a rotation answered before is
   * in it): the attempts that start while a read is under way share the one after it.
   */
  #record(): Promise<WebhookSubscription | null> {
    if (!this.#nextRecord) {
      const read = this.#recordRead.then(() => {
        this.#nextRecord = undefined;
        return this.#deps.store.get(this.#storage, this.#id);
      });
      this.#nextRecord = read;
      this.#recordRead = read.then(
        () => {},
        () => {},
      );
    }
    return this.#nextRecord;
  }
}

/**
 * The secrets that sign a delivery at `now`, opened: the subscription's, and its predecessor's while
 * it is valid; or why they do not open (sealed under a SECRETS_KEY this process does not have).
 */
function signingSecrets(
  open: (stored: string) => string,
  subscription: WebhookSubscription,
  now: number,
): { open: string[] } | { problem: string } {
  const previous = subscription.previousSecret;
  const stored =
    previous && previous.until > now ? [subscription.secret, previous.secret] : [subscription.secret];
  try {
    return { open: stored.map(open) };
  } catch (err) {
    if (err instanceof SecretBoxError) return { problem: err.message };
    throw err;
  }
}
