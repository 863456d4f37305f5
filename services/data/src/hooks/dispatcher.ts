/**
 * Webhook delivery in one data-service process (docs/webhooks.md). Every process
 * is a consumer (its own name) of every subscription's consumer group, so the
 * replicas share the work: Redis hands each new event to one of them.
 *
 * One worker per subscription (subscription-worker.ts; a slow receiver holds up no other), which
 * takes the subscription's events from their source (event-source.ts: due retries, entries taken
 * over from a process that died, replayed dead letters, new feed events) and hands each to its
 * deliverer (deliverer.ts: sign, post, record) once its account has a turn of the process's
 * sending capacity.
 * A receiver holds only its own subscription (docs/webhooks.md#isolation-and-the-circuit):
 *  - a subscription has at most WEBHOOK_SUBSCRIPTION_CONCURRENCY attempts under way in the
 *    process (taken, waiting for a turn or for the receiver);
 *  - the process sends WEBHOOK_CONCURRENCY at once, one account at most
 *    WEBHOOK_ACCOUNT_CONCURRENCY of them, and accounts waiting for a turn take turns
 *    (sandbox/fair-share.ts, as the sandbox shares its processes);
 *  - attempts that time out in a row open the subscription's circuit (circuit.ts): it sends
 *    nothing until one probe is answered.
 * A 2xx answer settles an event; anything else schedules a retry with back-off until
 * WEBHOOK_RETRY_WINDOW_SECONDS after its first failure, then it is parked as a dead letter
 * (attempt-outcome.ts). Each attempt goes to the delivery log.
 */
import { hostname } from "node:os";
import { FairShare } from "../sandbox/fair-share.ts";
import type { WebhookSubscription } from "../store/webhook-store.ts";
import type { DispatcherDeps } from "./dispatch-deps.ts";
import { SubscriptionWorker, type Turns } from "./subscription-worker.ts";

/** How often the subscriptions are looked up again (a new one starts within this; its events wait in its group). */
const REFRESH_MS = 1000;

export class WebhookDispatcher {
  readonly #deps: DispatcherDeps;
  readonly #workers = new Map<string, SubscriptionWorker>();
  readonly #turns: Turns;
  /** This process's consumer name in every group. */
  readonly consumer = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(deps: DispatcherDeps) {
    this.#deps = deps;
    const { concurrency, accountConcurrency } = deps.timing;
    const share = new FairShare({
      totalConcurrency: concurrency,
      accountConcurrency: Math.min(accountConcurrency, concurrency),
      // Turns only: no CPU budget, no queue limit (each subscription's limit bounds what waits).
      accountCpuMs: Number.POSITIVE_INFINITY,
      windowMs: 60_000,
      accountQueue: Number.MAX_SAFE_INTEGER,
    });
    this.#turns = (account) => share.turn(account);
  }

  start(): void {
    const tick = async () => {
      try {
        await this.#refresh();
      } catch (err) {
        this.#deps.logger.warn(
          { error: err instanceof Error ? err.message : String(err) },
          "webhook subscriptions could not be read",
        );
      }
      if (!this.#stopped) this.#timer = setTimeout(tick, REFRESH_MS);
    };
    void tick();
  }

  /** Starts workers for new subscriptions and stops those of removed ones. */
  async #refresh(): Promise<void> {
    const seen = new Set<string>();
    for (const project of await this.#deps.store.projects()) {
      const prefix = `${project.storage.database}/${project.storage.collectionPrefix}/`;
      let subscriptions: WebhookSubscription[];
      let circuits: Map<string, string>;
      try {
        const model = await this.#deps.project(project.account, project.project);
        if (!model || model.uid !== project.uid) {
          await this.#deps.store.forgetProject(project);
          continue;
        }
        subscriptions = await this.#deps.store.list(project.storage);
        circuits = await this.#deps.store.circuits(project.storage);
      } catch (err) {
        // This project's workers keep going; the others are looked at as usual.
        for (const key of this.#workers.keys()) if (key.startsWith(prefix)) seen.add(key);
        this.#deps.logger.warn(
          {
            account: project.account,
            project: project.project,
            error: err instanceof Error ? err.message : String(err),
          },
          "webhook subscriptions of a project could not be read",
        );
        continue;
      }
      for (const subscription of subscriptions) {
        const key = `${prefix}${subscription.id}`;
        seen.add(key);
        let worker = this.#workers.get(key);
        if (worker) worker.subscription = subscription;
        else if (!this.#stopped) {
          worker = new SubscriptionWorker(subscription, project, this.#deps, this.consumer, this.#turns);
          this.#workers.set(key, worker);
        }
        worker?.circuit.seen(circuits.get(subscription.id) ?? "");
      }
    }
    for (const [key, worker] of this.#workers) {
      if (seen.has(key)) continue;
      worker.stop();
      this.#workers.delete(key);
    }
  }

  /** Subscriptions this process delivers for now. */
  get workers(): number {
    return this.#workers.size;
  }

  /** Stops taking work and waits for the deliveries under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const workers = [...this.#workers.values()];
    this.#workers.clear();
    for (const w of workers) w.stop();
    await Promise.all(workers.map((w) => w.done));
  }
}
