/**
 * Webhook delivery in one data-service process (docs/webhooks.md). Every process
 * is a consumer (its own name) of every subscription's consumer group, so the
 * replicas share the work: Redis hands each new event to one of them.
 *
 * One worker per subscription (a slow receiver holds up no other), each round:
 *  1. retries whose time has come, taken for one claim period (store/webhook-store.ts);
 *  2. now and then, entries another consumer was given and left unanswered for
 *     WEBHOOK_CLAIM_IDLE_MS: its process died mid-delivery, so they are sent again;
 *  3. dead letters an admin sent again (the replay stream), then new feed events;
 *     events the subscription does not take (table, verb, filter) are acknowledged unsent;
 *  4. every delivery at once, WEBHOOK_CONCURRENCY at most in the process.
 * Rounds do not wait for their deliveries: the next round starts while they are under way, as long
 * as fewer than IN_FLIGHT are, so one receiver that answers one event slowly (up to
 * WEBHOOK_TIMEOUT_MS) does not hold up the subscription's later events.
 * A 2xx answer settles an event; anything else schedules a retry with back-off
 * (hooks/backoff.ts) until WEBHOOK_RETRY_WINDOW_SECONDS after its first failure,
 * then it is parked as a dead letter. Each attempt goes to the delivery log.
 */
import { hostname } from "node:os";
import type { Logger } from "../../../../shared/logger.ts";
import type { ProjectModel } from "../domain/model/project-model.ts";
import { parseFeedEntry } from "../store/change-feed.ts";
import { type SecretBox, SecretBoxError } from "../store/secret-box.ts";
import type {
  DeadLetter,
  DeliveryLogEntry,
  DeliverySource,
  RetryState,
  WebhookProject,
  WebhookStore,
  WebhookSubscription,
} from "../store/webhook-store.ts";
import { type Backoff, retryDelayMs } from "./backoff.ts";
import { type AttemptResult, postWebhook } from "./egress.ts";
import { type Delivery, renderDelivery } from "./payload.ts";
import { webhookHeaders } from "./signature.ts";
import { currentEventTest, type EventTest } from "./subscription-rules.ts";

export interface DispatchTiming {
  concurrency: number;
  timeoutMs: number;
  pollMs: number;
  claimIdleMs: number;
  retryWindowMs: number;
  backoff: Backoff;
  logLength: number;
}

export interface DispatchMetrics {
  attempt(outcome: "delivered" | "failed" | "dead", latencyMs: number): void;
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

/** Entries one worker takes from each source per round. */
const BATCH = 100;
/** Deliveries one worker has under way at most (taken, waiting for a slot or for the receiver). */
const IN_FLIGHT = 2 * BATCH;
/** How often the subscriptions are looked up again (a new one starts within this; its events wait in its group). */
const REFRESH_MS = 1000;
/** How often a worker checks whether the feed trimmed events it had not read. */
const TRIM_CHECK_MS = 5000;

/** At most `size` holders at once; the others wait in order. */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}

/** One event on its way: where it came from (a first attempt) or its retry state (a retry). */
interface Item {
  delivery: Delivery;
  from: { source: DeliverySource; entry: string } | null;
  state: RetryState | null;
}

class SubscriptionWorker {
  subscription: WebhookSubscription;
  readonly #project: WebhookProject;
  readonly #deps: DispatcherDeps;
  readonly #consumer: string;
  readonly #slots: Slots;
  readonly #now: () => number;
  /** The event test, and what it was compiled from (the project's revision, the subscription's tables, verbs and filter). */
  #test: { madeOf: string; test: EventTest | null } | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;
  #cursors: Record<DeliverySource, string> = { feed: "0-0", replay: "0-0" };
  #lastClaim = 0;
  #lastTrimCheck = 0;
  /** The subscription's secrets as last opened, by their stored form: opening costs more than signing. */
  readonly #opened = new Map<string, string>();
  /** Deliveries under way, by the event's source and position (or webhook id, for a retry). */
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly done: Promise<void>;

  constructor(
    subscription: WebhookSubscription,
    project: WebhookProject,
    deps: DispatcherDeps,
    consumer: string,
    slots: Slots,
  ) {
    this.subscription = subscription;
    this.#project = project;
    this.#deps = deps;
    this.#consumer = consumer;
    this.#slots = slots;
    this.#now = deps.now ?? Date.now;
    this.done = this.#run();
  }

  stop(): void {
    this.#stopped = true;
    this.#wake?.();
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      if (this.#inFlight.size >= IN_FLIGHT) {
        await Promise.race(this.#inFlight.values());
        continue;
      }
      let worked = 0;
      try {
        worked = await this.#round(IN_FLIGHT - this.#inFlight.size);
      } catch (err) {
        this.#deps.logger.warn(
          { subscription: this.subscription.id, error: err instanceof Error ? err.message : String(err) },
          "webhook delivery round failed",
        );
      }
      if (worked === 0 && !this.#stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.#deps.timing.pollMs);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
    await Promise.all(this.#inFlight.values());
  }

  /**
   * The subscription's event test for the project's current revision; null while there is none
   * (the project is gone, or its filter no longer compiles: its events wait in the group).
   */
  async #eventTest(): Promise<EventTest | null> {
    const model = await this.#deps.project(this.#project.account, this.#project.project);
    if (!model || model.uid !== this.#project.uid) return null;
    const { tables, verbs, filter } = this.subscription;
    const madeOf = JSON.stringify([model.revision, tables, verbs, filter]);
    if (this.#test?.madeOf !== madeOf) {
      let test: EventTest | null = null;
      try {
        test = currentEventTest(model, { tables, verbs, filter });
      } catch (err) {
        this.#deps.logger.warn(
          {
            subscription: this.subscription.id,
            revision: model.revision,
            error: err instanceof Error ? err.message : String(err),
          },
          "a webhook subscription's filter does not compile against the project's definition; its events wait",
        );
      }
      this.#test = { madeOf, test };
    }
    return this.#test.test;
  }

  /** Takes up to `room` deliveries and starts them; answers how many entries it took. */
  async #round(room: number): Promise<number> {
    const { store, timing } = this.#deps;
    const { storage } = this.#project;
    const id = this.subscription.id;
    const test = await this.#eventTest();
    if (!test) return 0;
    const now = this.#now();
    const items: Item[] = [];
    const batch = Math.min(BATCH, room);
    for (const state of await store.takeDue(storage, id, now, now + timing.claimIdleMs, batch)) {
      const { webhookId, position, type, body } = state;
      items.push({ delivery: { webhookId, position, type, body }, from: null, state });
    }
    const entries: { source: DeliverySource; entry: [string, string[]] }[] = [];
    if (now - this.#lastClaim >= Math.min(timing.claimIdleMs / 2, 5000)) {
      this.#lastClaim = now;
      for (const source of ["feed", "replay"] as const) {
        const taken = await store.takeOver(
          storage,
          id,
          this.#consumer,
          source,
          timing.claimIdleMs,
          this.#cursors[source],
          batch,
        );
        this.#cursors[source] = taken.next;
        // A full pass over the pending entries: forget consumers of processes long gone.
        if (taken.next === "0-0")
          await store.dropIdleConsumers(storage, id, source, timing.claimIdleMs * 10, this.#consumer);
        entries.push(...taken.entries.map((entry) => ({ source, entry })));
        if (taken.deleted.length > 0) await this.#lost(taken.deleted.length);
      }
    }
    for (const source of ["replay", "feed"] as const) {
      const fresh = await store.readNew(storage, id, this.#consumer, source, batch);
      entries.push(...fresh.map((entry) => ({ source, entry })));
    }
    const skipped: string[] = [];
    for (const { source, entry } of entries) {
      const [position, flat] = entry;
      const delivery = source === "feed" ? this.#fromFeed(position, flat, test) : fromReplay(flat);
      if (delivery) items.push({ delivery, from: { source, entry: position }, state: null });
      else if (source === "feed") skipped.push(position);
      else await store.ack(storage, id, source, [position]);
    }
    await store.ack(storage, id, "feed", skipped);
    if (now - this.#lastTrimCheck >= TRIM_CHECK_MS) {
      this.#lastTrimCheck = now;
      const trimmed = await store.trimmedUnread(storage, id);
      if (trimmed > 0) await this.#lost(trimmed);
    }
    for (const item of items) this.#start(item);
    return items.length + skipped.length;
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

  /**
   * Starts one delivery unless the same one is under way already (an entry of this process's own
   * taken over again because it waited for a slot longer than WEBHOOK_CLAIM_IDLE_MS).
   */
  #start(item: Item): void {
    const key = item.from ? `${item.from.source} ${item.from.entry}` : `retry ${item.delivery.webhookId}`;
    if (this.#inFlight.has(key)) return;
    const delivery = this.#slots
      .run(() => this.#deliver(item))
      .catch((err: unknown) => {
        // The receiver's answer could not be recorded: the entry stays pending (taken over after
        // WEBHOOK_CLAIM_IDLE_MS), a retry's lease runs out; either is sent again.
        this.#deps.logger.warn(
          { subscription: this.subscription.id, error: err instanceof Error ? err.message : String(err) },
          "a webhook delivery's outcome could not be recorded",
        );
      })
      .finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, delivery);
  }

  #fromFeed(position: string, flat: string[], test: EventTest): Delivery | null {
    const event = parseFeedEntry(position, flat);
    if (!event || !test(event)) return null;
    const { account, project } = this.#project;
    return renderDelivery({ account, project, subscription: this.subscription.id }, event);
  }

  async #lost(events: number): Promise<void> {
    this.#deps.metrics.lost(events);
    this.#deps.logger.warn(
      { subscription: this.subscription.id, events },
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

  async #log(entry: DeliveryLogEntry): Promise<void> {
    await this.#deps.store.log(
      this.#project.storage,
      this.subscription.id,
      entry,
      this.#deps.timing.logLength,
    );
  }

  async #deliver(item: Item): Promise<void> {
    if (this.#stopped) return; // taken but not sent: a retry's lease runs out, an entry stays pending
    const { store, timing, metrics } = this.#deps;
    const { storage } = this.#project;
    const { id, url } = this.subscription;
    const { delivery } = item;
    const sentAt = this.#now();
    const secrets = signingSecrets((stored) => this.#open(stored), this.subscription, sentAt);
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
            url,
            webhookHeaders(secrets.open, delivery.webhookId, Math.floor(sentAt / 1000), delivery.body),
            delivery.body,
          );
    const now = this.#now();
    const attempt = (item.state?.attempts ?? 0) + 1;
    const logged = {
      at: now,
      webhookId: delivery.webhookId,
      position: delivery.position,
      attempt,
      status: result.status,
      latencyMs: result.latencyMs,
      error: result.error,
    };
    if (result.error === null) {
      if (item.state) await store.retried(storage, id, delivery.webhookId);
      else if (item.from) await store.ack(storage, id, item.from.source, [item.from.entry]);
      metrics.attempt("delivered", result.latencyMs);
      await this.#log({ ...logged, outcome: "delivered" });
      return;
    }
    const state: RetryState = {
      ...delivery,
      attempts: attempt,
      firstAttemptAt: item.state?.firstAttemptAt ?? now,
      lastStatus: result.status,
      lastError: result.error,
    };
    if (now - state.firstAttemptAt >= timing.retryWindowMs) {
      const dead: DeadLetter = { ...state, parkedAt: now };
      await store.park(storage, id, item.from, dead);
      metrics.attempt("dead", result.latencyMs);
      await this.#log({ ...logged, outcome: "dead" });
      return;
    }
    await store.fail(storage, id, item.from, state, now + retryDelayMs(timing.backoff, attempt));
    metrics.attempt("failed", result.latencyMs);
    await this.#log({ ...logged, outcome: "failed" });
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

/** A dead letter sent again: the same id and body, attempts counted afresh. */
function fromReplay(flat: string[]): Delivery | null {
  const text = flat[flat.indexOf("dead") + 1];
  if (flat.indexOf("dead") < 0 || text === undefined) return null;
  const dead = JSON.parse(text) as DeadLetter;
  return { webhookId: dead.webhookId, position: dead.position, type: dead.type, body: dead.body };
}

export class WebhookDispatcher {
  readonly #deps: DispatcherDeps;
  readonly #workers = new Map<string, SubscriptionWorker>();
  readonly #slots: Slots;
  /** This process's consumer name in every group. */
  readonly consumer = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(deps: DispatcherDeps) {
    this.#deps = deps;
    this.#slots = new Slots(deps.timing.concurrency);
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
      try {
        const model = await this.#deps.project(project.account, project.project);
        if (!model || model.uid !== project.uid) {
          await this.#deps.store.forgetProject(project);
          continue;
        }
        subscriptions = await this.#deps.store.list(project.storage);
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
      for (const found of subscriptions) {
        const subscription = await this.#resealed(project, found);
        const key = `${prefix}${subscription.id}`;
        seen.add(key);
        const worker = this.#workers.get(key);
        if (worker) worker.subscription = subscription;
        else if (!this.#stopped)
          this.#workers.set(
            key,
            new SubscriptionWorker(subscription, project, this.#deps, this.consumer, this.#slots),
          );
      }
    }
    for (const [key, worker] of this.#workers) {
      if (seen.has(key)) continue;
      worker.stop();
      this.#workers.delete(key);
    }
  }

  /**
   * The subscription with its secrets sealed under the current SECRETS_KEY: one stored as it was, or
   * under a key the operator has since put a new one in front of, is sealed again (so that the old
   * key can be retired). As it was when that cannot be done now (a concurrent change, a secret that
   * does not open: its deliveries say why).
   */
  async #resealed(project: WebhookProject, subscription: WebhookSubscription): Promise<WebhookSubscription> {
    const box = this.#deps.secrets;
    try {
      const secret = box.reseal(subscription.secret);
      const previous = subscription.previousSecret;
      const previousSecret = previous && box.reseal(previous.secret);
      if (secret === undefined && previousSecret === undefined) return subscription;
      const after: WebhookSubscription = {
        ...subscription,
        secret: secret ?? subscription.secret,
        ...(previous ? { previousSecret: { ...previous, secret: previousSecret ?? previous.secret } } : {}),
      };
      const outcome = await this.#deps.store.update(project.storage, subscription, after);
      return outcome === "updated" ? after : subscription;
    } catch (err) {
      if (!(err instanceof SecretBoxError))
        this.#deps.logger.warn(
          { subscription: subscription.id, error: err instanceof Error ? err.message : String(err) },
          "a webhook subscription's secret could not be sealed again; trying at the next refresh",
        );
      return subscription;
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
