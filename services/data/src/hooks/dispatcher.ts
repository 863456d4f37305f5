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
 *  4. each delivery once its account has a turn of the process's sending capacity.
 * A receiver holds only its own subscription (docs/webhooks.md#isolation-and-the-circuit):
 *  - a subscription has at most WEBHOOK_SUBSCRIPTION_CONCURRENCY attempts under way in the
 *    process (taken, waiting for a turn or for the receiver);
 *  - the process sends WEBHOOK_CONCURRENCY at once, one account at most
 *    WEBHOOK_ACCOUNT_CONCURRENCY of them, and accounts waiting for a turn take turns
 *    (sandbox/fair-share.ts, as the sandbox shares its processes);
 *  - attempts that time out in a row open the subscription's circuit (circuit.ts): it sends
 *    nothing until one probe is answered.
 * Rounds do not wait for their deliveries: the next round starts while they are under way, so one
 * receiver that answers one event slowly (up to WEBHOOK_TIMEOUT_MS) does not hold up the
 * subscription's later events. Each attempt signs with the subscription's secrets as stored when
 * it starts (a rotation answered before applies to it).
 * A 2xx answer settles an event; anything else schedules a retry with back-off
 * (hooks/backoff.ts) until WEBHOOK_RETRY_WINDOW_SECONDS after its first failure,
 * then it is parked as a dead letter. Each attempt goes to the delivery log.
 */
import { hostname } from "node:os";
import type { Logger } from "../../../../shared/logger.ts";
import type { ProjectModel } from "../domain/model/project-model.ts";
import { FairShare } from "../sandbox/fair-share.ts";
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
import type { CircuitPolicy } from "./circuit.ts";
import { sendingNow } from "./circuit.ts";
import { CircuitKeeper } from "./circuit-keeper.ts";
import { type AttemptResult, postWebhook } from "./egress.ts";
import { type Delivery, renderDelivery } from "./payload.ts";
import { webhookHeaders } from "./signature.ts";
import { currentEventTest, type EventTest } from "./subscription-rules.ts";

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

/** Entries one worker takes from each source per round at most. */
const BATCH = 100;
/** How often the subscriptions are looked up again (a new one starts within this; its events wait in its group). */
const REFRESH_MS = 1000;
/** How often a worker checks whether the feed trimmed events it had not read. */
const TRIM_CHECK_MS = 5000;

/** A turn of the process's sending capacity (sandbox/fair-share.ts), ended once. */
type Turns = (account: string) => Promise<{ end(cpuMs: number): void }>;

/** One event on its way: where it came from (a first attempt) or its retry state (a retry). */
interface Item {
  delivery: Delivery;
  from: { source: DeliverySource; entry: string } | null;
  state: RetryState | null;
}

class SubscriptionWorker {
  subscription: WebhookSubscription;
  readonly circuit: CircuitKeeper;
  readonly #project: WebhookProject;
  readonly #deps: DispatcherDeps;
  readonly #consumer: string;
  readonly #turns: Turns;
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
  /**
   * Events taken (from the group, the replay stream or the retries) and not settled, by the event's
   * source and position (or webhook id, for a retry): waiting in `#queue` or being sent. Each one's
   * promise ends when its attempt does, or when it is let go unsent (the circuit opened).
   */
  readonly #taken = new Map<string, { settled: Promise<void>; letGo: () => void }>();
  /** Taken events not sent yet, oldest first: the next ones as soon as the subscription may send more. */
  #queue: { key: string; item: Item }[] = [];
  /** Attempts being sent (a turn asked for, or the receiver's answer awaited). */
  #sending = 0;
  /** The probe is being sent (the circuit half-open, held by this process). */
  #probing = false;
  /** Wakes the loop when an attempt ends (room to read more). */
  #attemptEnded: (() => void) | undefined;
  /** The subscription's record as stored: the read that callers asking now will share (not begun yet). */
  #nextRecord: Promise<WebhookSubscription | null> | undefined;
  /** The last read of the record begun (the next one begins after it). */
  #recordRead: Promise<void> = Promise.resolve();
  readonly done: Promise<void>;

  constructor(
    subscription: WebhookSubscription,
    project: WebhookProject,
    deps: DispatcherDeps,
    consumer: string,
    turns: Turns,
  ) {
    this.subscription = subscription;
    this.#project = project;
    this.#deps = deps;
    this.#consumer = consumer;
    this.#turns = turns;
    this.#now = deps.now ?? Date.now;
    this.circuit = new CircuitKeeper(
      deps.store,
      project.storage,
      subscription.id,
      consumer,
      deps.timing.circuit,
    );
    this.done = this.#run();
  }

  stop(): void {
    this.#stopped = true;
    this.#wake?.();
  }

  /**
   * What the subscription may do now by its circuit: send as usual, send one probe (taken once the
   * cool-down is over, and held on while there was nothing to send), or wait.
   */
  async #mode(): Promise<"send" | "probe" | "wait"> {
    const { timing } = this.#deps;
    const now = this.#now();
    const mode = sendingNow(this.circuit.value, this.#consumer, now);
    if (mode === "send" || this.#probing) return mode;
    const holdLeft = (this.circuit.value.until ?? 0) - now;
    if (mode === "probe" && holdLeft >= timing.timeoutMs + timing.pollMs) return mode;
    await this.circuit.holdProbe(now, 2 * timing.timeoutMs + timing.pollMs);
    return sendingNow(this.circuit.value, this.#consumer, now);
  }

  /** Starts queued events as the subscription's limit and its circuit let it. */
  #pump(mode: "send" | "probe" | "wait"): void {
    const limit = mode === "send" ? this.#deps.timing.subscriptionConcurrency : 0;
    while (this.#sending < limit && this.#queue.length > 0) this.#send(this.#queue.shift()!, false);
    if (mode === "probe" && !this.#probing && this.#sending === 0 && this.#queue.length > 0)
      this.#send(this.#queue.shift()!, true);
  }

  /**
   * Lets the queued events go unsent while the circuit is open: a feed or replay entry stays pending
   * (taken over after WEBHOOK_CLAIM_IDLE_MS, by this process or another), a retry's lease runs out.
   * Kept here, they could be taken over meanwhile and sent twice.
   */
  #letGo(): void {
    for (const { key } of this.#queue.splice(0)) this.#taken.get(key)?.letGo();
  }

  async #run(): Promise<void> {
    const { subscriptionConcurrency: limit, pollMs } = this.#deps.timing;
    while (!this.#stopped) {
      let worked = 0;
      let mode: "send" | "probe" | "wait" = "wait";
      try {
        mode = await this.#mode();
        if (mode === "wait") this.#letGo();
        this.#pump(mode);
        // Read ahead while the sending ones are under way: up to the limit again waiting in the queue,
        // read in batches of at least half the limit. A probe is one event.
        const room =
          mode === "send" ? 2 * limit - this.#taken.size : mode === "probe" && this.#taken.size === 0 ? 1 : 0;
        if (room >= (mode === "send" ? Math.ceil(limit / 2) : 1)) {
          worked = await this.#round(room);
          this.#pump(mode);
        }
      } catch (err) {
        this.#deps.logger.warn(
          { subscription: this.subscription.id, error: err instanceof Error ? err.message : String(err) },
          "webhook delivery round failed",
        );
      }
      if (worked > 0 || this.#stopped) continue;
      // Nothing read: until an attempt ends (room again) or the poll interval passes.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        this.#wake = this.#attemptEnded = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.#letGo();
    await Promise.all([...this.#taken.values()].map((t) => t.settled));
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
    /** What is left of the room, in entries of one source. */
    const left = () => Math.min(BATCH, room - items.length);
    for (const state of await store.takeDue(storage, id, now, now + timing.claimIdleMs, left())) {
      const { webhookId, position, type, body } = state;
      items.push({ delivery: { webhookId, position, type, body }, from: null, state });
    }
    const skipped: string[] = [];
    /** Feed and replay entries: started when the subscription takes them; feed events it does not, acknowledged. */
    const take = async (source: DeliverySource, entries: [string, string[]][]) => {
      for (const [position, flat] of entries) {
        const delivery = source === "feed" ? this.#fromFeed(position, flat, test) : fromReplay(flat);
        if (delivery) items.push({ delivery, from: { source, entry: position }, state: null });
        else if (source === "feed") skipped.push(position);
        else await store.ack(storage, id, source, [position]);
      }
    };
    if (now - this.#lastClaim >= Math.min(timing.claimIdleMs / 2, 5000)) {
      this.#lastClaim = now;
      for (const source of ["feed", "replay"] as const) {
        if (left() <= 0) break;
        const taken = await store.takeOver(
          storage,
          id,
          this.#consumer,
          source,
          timing.claimIdleMs,
          this.#cursors[source],
          left(),
        );
        this.#cursors[source] = taken.next;
        // A full pass over the pending entries: forget consumers of processes long gone.
        if (taken.next === "0-0")
          await store.dropIdleConsumers(storage, id, source, timing.claimIdleMs * 10, this.#consumer);
        await take(source, taken.entries);
        if (taken.deleted.length > 0) await this.#lost(taken.deleted.length);
      }
    }
    for (const source of ["replay", "feed"] as const) {
      if (left() <= 0) break;
      await take(source, await store.readNew(storage, id, this.#consumer, source, left()));
    }
    await store.ack(storage, id, "feed", skipped);
    if (now - this.#lastTrimCheck >= TRIM_CHECK_MS) {
      this.#lastTrimCheck = now;
      const trimmed = await store.trimmedUnread(storage, id);
      if (trimmed > 0) await this.#lost(trimmed);
    }
    for (const item of items) this.#take(item);
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
   * Queues one event unless the same one is taken already (an entry of this process's own taken over
   * again because it waited longer than WEBHOOK_CLAIM_IDLE_MS).
   */
  #take(item: Item): void {
    const key = item.from ? `${item.from.source} ${item.from.entry}` : `retry ${item.delivery.webhookId}`;
    if (this.#taken.has(key)) return;
    let letGo: () => void = () => {};
    const settled = new Promise<void>((resolve) => {
      letGo = () => {
        this.#taken.delete(key);
        resolve();
      };
    });
    this.#taken.set(key, { settled, letGo });
    this.#queue.push({ key, item });
  }

  /** Sends one queued event once its account has a turn; settles it when the attempt is recorded. */
  #send({ key, item }: { key: string; item: Item }, probe: boolean): void {
    this.#sending++;
    if (probe) this.#probing = true;
    this.#turns(this.#project.account)
      .then(async (turn) => {
        try {
          await this.#deliver(item);
        } finally {
          turn.end(0);
        }
      })
      .catch((err: unknown) => {
        // The receiver's answer could not be recorded: the entry stays pending (taken over after
        // WEBHOOK_CLAIM_IDLE_MS), a retry's lease runs out; either is sent again.
        this.#deps.logger.warn(
          { subscription: this.subscription.id, error: err instanceof Error ? err.message : String(err) },
          "a webhook delivery's outcome could not be recorded",
        );
      })
      .finally(() => {
        this.#sending--;
        if (probe) this.#probing = false;
        this.#taken.get(key)?.letGo();
        this.#attemptEnded?.();
      });
  }

  #fromFeed(position: string, flat: string[], test: EventTest): Delivery | null {
    const event = parseFeedEntry(position, flat);
    const announced = event && test(event);
    if (!event || !announced) return null;
    const { account, project } = this.#project;
    return renderDelivery({ account, project, subscription: this.subscription.id }, event, announced);
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

  /**
   * The subscription as stored, read after the caller asked (so that a rotation answered before is
   * in it): the attempts that start while a read is under way share the one after it.
   */
  #record(): Promise<WebhookSubscription | null> {
    if (!this.#nextRecord) {
      const read = this.#recordRead.then(() => {
        this.#nextRecord = undefined;
        return this.#deps.store.get(this.#project.storage, this.subscription.id);
      });
      this.#nextRecord = read;
      this.#recordRead = read.then(
        () => {},
        () => {},
      );
    }
    return this.#nextRecord;
  }

  /** One attempt: signed with the secrets as stored now, sent, its outcome recorded. */
  async #deliver(item: Item): Promise<void> {
    if (this.#stopped) return; // taken but not sent: a retry's lease runs out, an entry stays pending
    const { store, timing, metrics } = this.#deps;
    const { storage } = this.#project;
    const id = this.subscription.id;
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
    if (!("problem" in secrets)) await this.circuit.attempted(result.timedOut, now);
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
      metrics.attempt("delivered", result.latencyMs, this.#project);
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
      metrics.attempt("dead", result.latencyMs, this.#project);
      await this.#log({ ...logged, outcome: "dead" });
      return;
    }
    await store.fail(storage, id, item.from, state, now + retryDelayMs(timing.backoff, attempt));
    metrics.attempt("failed", result.latencyMs, this.#project);
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
      for (const found of subscriptions) {
        const subscription = await this.#resealed(project, found);
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
