/**
 * The lease of a write intent, as its holder (a request, or a recoverer working
 * an abandoned intent) sees it. The holder renews it every third of its length.
 * It counts as held only while at least a third of it is left, measured from
 * when the last grant was *sent* to Redis, so the holder's view never runs
 * later than Redis's: a holder that cannot renew stops writing well before
 * another process may claim the intent.
 */
export class Lease {
  readonly #lengthMs: number;
  readonly #renew: () => Promise<boolean>;
  readonly #now: () => number;
  #validUntil = 0;
  #timer: NodeJS.Timeout | undefined;
  #renewing = false;

  constructor(lengthMs: number, renew: () => Promise<boolean>, now: () => number = Date.now) {
    this.#lengthMs = lengthMs;
    this.#renew = renew;
    this.#now = now;
  }

  /** True while the holder may still start a store write under this lease. */
  get held(): boolean {
    return this.#now() < this.#validUntil - this.#lengthMs / 3;
  }

  /** Redis granted (or renewed) the lease by a call sent at `sentAt`. */
  granted(sentAt: number): void {
    this.#validUntil = Math.max(this.#validUntil, sentAt + this.#lengthMs);
  }

  /** The lease is no longer ours (another holder, or the record is gone). */
  lost(): void {
    this.#validUntil = 0;
  }

  /** Renews every third of the lease until `stop()`; a failed renewal leaves the lease to run out. */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.renewNow(), this.#lengthMs / 3);
    this.#timer.unref();
  }

  async renewNow(): Promise<void> {
    if (this.#renewing) return;
    this.#renewing = true;
    const sentAt = this.#now();
    try {
      if (await this.#renew()) this.granted(sentAt);
      else this.lost();
    } catch {
      // Redis unreachable: the lease runs out by itself unless a later renewal gets through.
    } finally {
      this.#renewing = false;
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
