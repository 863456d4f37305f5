/**
 * A cache of something per account, bounded by memory rather than by a count:
 * the least recently used entries go first once the estimate of all of them
 * passes the budget, so that many active accounts thin it out gradually
 * instead of clearing it at a count.
 */
import { LRUCache } from "lru-cache";

/** Heap bytes of an entry beyond its key's characters: the cache's node, the value's small object and promise. */
const ENTRY_BYTES = 256;

/** What the caches of per-account settings keep by default: 4 MiB, about 14,000 accounts. */
export const PER_ACCOUNT_CACHE_BYTES = 4 * 1024 * 1024;

export function perAccountCache<V extends {}>(
  budgetBytes = PER_ACCOUNT_CACHE_BYTES,
  valueBytes = 0,
): LRUCache<string, V> {
  return new LRUCache<string, V>({
    maxSize: Math.max(1, Math.floor(budgetBytes)),
    sizeCalculation: (_value, key) => ENTRY_BYTES + valueBytes + 2 * key.length,
  });
}
