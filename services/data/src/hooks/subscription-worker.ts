/**
 * One subscription's delivery in this process (hooks/dispatcher.ts): its events taken from their
 * source (event-source.ts) and sent by its deliverer (deliverer.ts) as the subscription's limit and
 * its circuit let it, each round:
 *  - the circuit says whether the subscription sends as usual, sends one probe, or waits (then the
 *    events it holds unsent are let go, for this process or another to take later);
 *  - it reads ahead while attempts are under way: up to twice WEBHOOK_SUBSCRIPTION_CONCURRENCY
 *    taken, in batches of at least half of it;
 *  - each attempt waits for its account's turn of the process's sending capacity.
 * Rounds do not wait for their deliveries: the next round starts while they are under way, so one
 * receiver that answers one event slowly (up to WEBHOOK_TIMEOUT_MS) does not hold up the
 * subscription's later events.
 */
import { parseFeedEntry } from "../store/change-feed.ts";
import type { WebhookProject, WebhookSubscription } from "../store/webhook-store.ts";
import { sendingNow } from "./circuit.ts";
import { CircuitKeeper } from "./circuit-keeper.ts";
import { Deliverer } from "./deliverer.ts";
import type { DispatcherDeps } from "./dispatch-deps.ts";
import { type Item, SubscriptionEvents } from "./event-source.ts";
import { type Delivery, renderDelivery } from "./payload.ts";
import { currentEventTest, type EventTest } from "./subscription-rules.ts";

/** A turn of the process's sending capacity (sandbox/fair-share.ts), ended once. */
export type Turns = (account: string) => Promise<{ end(cpuMs: number): void }>;

type Mode = "send" | "probe" | "wait";

export class SubscriptionWorker {
  subscription: WebhookSubscription;
  readonly circuit: CircuitKeeper;
  readonly #project: WebhookProject;
  readonly #deps: DispatcherDeps;
  readonly #consumer: string;
  readonly #turns: Turns;
  readonly #now: () => number;
  readonly #events: SubscriptionEvents;
  readonly #deliverer: Deliverer;
  /** The event test, and what it was compiled from (the project's revision, the subscription's tables, verbs and filter). */
  #test: { madeOf: string; test: EventTest | null } | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;
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
    this.#deliverer = new Deliverer(deps, project, subscription.id, this.circuit);
    this.#events = new SubscriptionEvents(
      deps.store,
      project.storage,
      subscription.id,
      consumer,
      deps.timing.claimIdleMs,
      (events) => this.#deliverer.lost(events),
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
  async #mode(): Promise<Mode> {
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
  #pump(mode: Mode): void {
    const limit = mode === "send" ? this.#deps.timing.subscriptionConcurrency : 0;
    while (this.#sending < limit) {
      const next = this.#queue.shift();
      if (!next) break;
      this.#send(next, false);
    }
    if (mode === "probe" && !this.#probing && this.#sending === 0) {
      const next = this.#queue.shift();
      if (next) this.#send(next, true);
    }
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
      let mode: Mode = "wait";
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

  /** Takes up to `room` deliveries and queues them; answers how many entries it took. */
  async #round(room: number): Promise<number> {
    const test = await this.#eventTest();
    if (!test) return 0;
    const taken = await this.#events.take(room, this.#now(), (position, flat) =>
      this.#fromFeed(position, flat, test),
    );
    for (const item of taken.items) this.#take(item);
    return taken.read;
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
          // Taken but not sent once stopped: a retry's lease runs out, an entry stays pending.
          if (!this.#stopped) await this.#deliverer.deliver(item, this.#events);
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
}
