/**
 * Where one subscription's events come from in this process, and where they go back once answered
 * (store/webhook-store.ts; docs/webhooks.md), over both of its streams — the project's change feed
 * and the subscription's replay stream (dead letters an admin sent again) — and its retries:
 *  - take: retries whose time has come (for one claim period); now and then, entries another
 *    consumer was given and left unanswered for WEBHOOK_CLAIM_IDLE_MS (its process died
 *    mid-delivery); then replayed dead letters and new feed events. Feed events the subscription
 *    does not take are acknowledged unsent; events trimmed from the feed before they were read are
 *    reported lost;
 *  - settle, retry, park: an attempt's outcome, each one step of the store that also lets the entry
 *    leave its group (and a replay entry its stream).
 */
import { readStoredJson } from "../../../../shared/stored-json.ts";
import type { TenantStorage } from "../store/storage-names.ts";
import { deadLetterRecord } from "../store/webhook-records.ts";
import type { DeadLetter, DeliverySource, RetryState, WebhookStore } from "../store/webhook-store.ts";
import type { Delivery } from "./payload.ts";

/** One event on its way: where it came from (a first attempt) or its retry state (a retry). */
export interface Item {
  delivery: Delivery;
  from: { source: DeliverySource; entry: string } | null;
  state: RetryState | null;
}

/** Entries taken from each source per round at most. */
const BATCH = 100;
/** How often the source checks whether the feed trimmed events it had not read. */
const TRIM_CHECK_MS = 5000;

export class SubscriptionEvents {
  readonly #store: WebhookStore;
  readonly #storage: TenantStorage;
  readonly #id: string;
  readonly #consumer: string;
  readonly #claimIdleMs: number;
  readonly #lost: (events: number) => Promise<void>;
  #cursors: Record<DeliverySource, string> = { feed: "0-0", replay: "0-0" };
  #lastClaim = 0;
  #lastTrimCheck = 0;

  /** `lost`: told how many events the feed trimmed before they were read. */
  constructor(
    store: WebhookStore,
    storage: TenantStorage,
    subscription: string,
    consumer: string,
    claimIdleMs: number,
    lost: (events: number) => Promise<void>,
  ) {
    this.#store = store;
    this.#storage = storage;
    this.#id = subscription;
    this.#consumer = consumer;
    this.#claimIdleMs = claimIdleMs;
    this.#lost = lost;
  }

  /**
   * Up to `room` events to send at `now`; `fromFeed` renders a feed entry, null for one the
   * subscription does not take. `read`: the entries consumed, those acknowledged unsent included.
   */
  async take(
    room: number,
    now: number,
    fromFeed: (position: string, flat: string[]) => Delivery | null,
  ): Promise<{ items: Item[]; read: number }> {
    const store = this.#store;
    const storage = this.#storage;
    const id = this.#id;
    const items: Item[] = [];
    /** What is left of the room, in entries of one source. */
    const left = () => Math.min(BATCH, room - items.length);
    for (const state of await store.takeDue(storage, id, now, now + this.#claimIdleMs, left())) {
      const { webhookId, position, type, body } = state;
      items.push({ delivery: { webhookId, position, type, body }, from: null, state });
    }
    const skipped: string[] = [];
    /** Feed and replay entries: taken when the subscription takes them; feed events it does not, acknowledged. */
    const take = async (source: DeliverySource, entries: [string, string[]][]) => {
      for (const [position, flat] of entries) {
        const delivery = source === "feed" ? fromFeed(position, flat) : fromReplay(flat);
        if (delivery) items.push({ delivery, from: { source, entry: position }, state: null });
        else if (source === "feed") skipped.push(position);
        else await store.ack(storage, id, source, [position]);
      }
    };
    if (now - this.#lastClaim >= Math.min(this.#claimIdleMs / 2, 5000)) {
      this.#lastClaim = now;
      for (const source of ["feed", "replay"] as const) {
        if (left() <= 0) break;
        const taken = await store.takeOver(
          storage,
          id,
          this.#consumer,
          source,
          this.#claimIdleMs,
          this.#cursors[source],
          left(),
        );
        this.#cursors[source] = taken.next;
        // A full pass over the pending entries: forget consumers of processes long gone.
        if (taken.next === "0-0")
          await store.dropIdleConsumers(storage, id, source, this.#claimIdleMs * 10, this.#consumer);
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
    return { items, read: items.length + skipped.length };
  }

  /** Answered: a retry's state is dropped, an entry leaves its group. */
  async settle(item: Item): Promise<void> {
    if (item.state) await this.#store.retried(this.#storage, this.#id, item.delivery.webhookId);
    else if (item.from) await this.#store.ack(this.#storage, this.#id, item.from.source, [item.from.entry]);
  }

  /** Failed: tried again at `at` with `state`. */
  async retry(item: Item, state: RetryState, at: number): Promise<void> {
    await this.#store.fail(this.#storage, this.#id, item.from, state, at);
  }

  /** Out of retries: parked as a dead letter. */
  async park(item: Item, dead: DeadLetter): Promise<void> {
    await this.#store.park(this.#storage, this.#id, item.from, dead);
  }
}

/** A dead letter sent again: the same id and body, attempts counted afresh. */
function fromReplay(flat: string[]): Delivery | null {
  const text = flat[flat.indexOf("dead") + 1];
  if (flat.indexOf("dead") < 0 || text === undefined) return null;
  const dead = readStoredJson(deadLetterRecord, "webhook dead letter", text);
  return { webhookId: dead.webhookId, position: dead.position, type: dead.type, body: dead.body };
}
