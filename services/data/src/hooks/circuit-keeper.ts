/**
 * One process's view of a subscription's circuit (circuit.ts) and its changes to it: each change is
 * a compare-and-set of the stored circuit (store/webhook-store.ts), so that processes that see
 * time-outs or take the probe at the same moment do not overwrite each other. A process's own
 * changes are made one at a time; what other processes changed it learns by the next
 * compare-and-set or the dispatcher's refresh (every second).
 */
import type { TenantStorage } from "../store/storage-names.ts";
import type { WebhookStore } from "../store/webhook-store.ts";
import {
  afterAttempt,
  type Circuit,
  type CircuitPolicy,
  CLOSED,
  circuitText,
  parseCircuit,
  probeFree,
  probing,
} from "./circuit.ts";

/** Compare-and-set rounds one change may take before it gives up (others keep changing it). */
const ATTEMPTS = 20;

export class CircuitKeeper {
  readonly #store: WebhookStore;
  readonly #storage: TenantStorage;
  readonly #id: string;
  readonly #self: string;
  readonly #policy: CircuitPolicy;
  #text = "";
  #value: Circuit = CLOSED;
  #changes: Promise<unknown> = Promise.resolve();

  constructor(store: WebhookStore, storage: TenantStorage, id: string, self: string, policy: CircuitPolicy) {
    this.#store = store;
    this.#storage = storage;
    this.#id = id;
    this.#self = self;
    this.#policy = policy;
  }

  /** The circuit as this process last saw it. */
  get value(): Circuit {
    return this.#value;
  }

  /** The circuit as a read of the store found it (the dispatcher's refresh). */
  seen(text: string): void {
    if (text === this.#text) return;
    this.#text = text;
    this.#value = parseCircuit(text);
  }

  /** An attempt's outcome: a time-out counts (and may open it), anything else closes it. */
  attempted(timedOut: boolean, now: number): Promise<boolean> {
    return this.#change((c) => afterAttempt(c, timedOut, now, this.#policy));
  }

  /** Takes the probe when it is free, or holds it longer when this process has it: true when it does now. */
  holdProbe(now: number, holdMs: number): Promise<boolean> {
    return this.#change((c) =>
      probeFree(c, now) || (c.state === "half-open" && c.prober === this.#self)
        ? probing(c, this.#self, now, holdMs)
        : c,
    );
  }

  /**
   * Applies `change` to the circuit as it is stored, again on the stored value when another process
   * changed it meanwhile: true when the change was stored (false: nothing to change, the
   * subscription is gone, or others kept changing it).
   */
  #change(change: (c: Circuit) => Circuit): Promise<boolean> {
    const run = async () => {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const after = change(this.#value);
        const text = circuitText(after);
        if (text === this.#text) return false;
        const outcome = await this.#store.setCircuit(this.#storage, this.#id, this.#text, text);
        if (outcome.outcome === "gone") return false;
        if (outcome.outcome === "set") {
          this.#text = text;
          this.#value = after;
          return true;
        }
        this.seen(outcome.now);
      }
      return false;
    };
    const done = this.#changes.then(run, run);
    this.#changes = done.catch(() => {});
    return done;
  }
}
