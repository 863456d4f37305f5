/**
 * The in-process queue in front of the Redis row locks: requests of one
 * process that write the same rows wait here for each other (a promise, no
 * polling), so the later one plans again on top of the earlier one's commit
 * instead of committing a stale plan and undoing it.
 *
 * Keys are taken in sorted order, so two holders never wait for each other.
 */
export class RowQueue {
  readonly #tails = new Map<string, Promise<void>>();

  /** True when another request of this process holds one of `keys`. */
  isBusy(keys: Iterable<string>): boolean {
    for (const k of keys) if (this.#tails.has(k)) return true;
    return false;
  }

  /** Waits for and takes every key; resolves to the function that gives them back (idempotent). */
  async enter(keys: Iterable<string>): Promise<() => void> {
    const sorted = [...new Set(keys)].sort();
    const releases: (() => void)[] = [];
    for (const k of sorted) {
      const previous = this.#tails.get(k) ?? Promise.resolve();
      let release!: () => void;
      const mine = new Promise<void>((resolve) => {
        release = resolve;
      });
      const tail = previous.then(() => mine);
      this.#tails.set(k, tail);
      releases.push(() => {
        release();
        if (this.#tails.get(k) === tail) this.#tails.delete(k);
      });
      await previous;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const r of releases) r();
    };
  }
}
