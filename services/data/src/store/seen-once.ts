/**
 * A set of strings bounded by memory: `first(key)` is true the first time a key
 * is seen (and again once it was forgotten, the least recently seen first, to
 * stay within the budget). For work that is worth doing once per process but
 * harmless to do again.
 */
import { LRUCache } from "lru-cache";

/** Heap bytes of an entry beyond its key's characters (the cache's node and the map's slot). */
const ENTRY_BYTES = 96;

export class SeenOnce {
  readonly #seen: LRUCache<string, true>;

  constructor(budgetBytes: number) {
    this.#seen = new LRUCache<string, true>({
      maxSize: Math.max(1, Math.floor(budgetBytes)),
      sizeCalculation: (_value, key) => ENTRY_BYTES + 2 * key.length,
    });
  }

  first(key: string): boolean {
    if (this.#seen.get(key)) return false;
    this.#seen.set(key, true);
    return true;
  }
}
