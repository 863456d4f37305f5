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

/** `valueBytes`: the estimate of what a value holds beyond the entry, the same for all or each its own. */
export function perAccountCache<V extends {}>(
  budgetBytes = PER_ACCOUNT_CACHE_BYTES,
  valueBytes: number | ((value: V) => number) = 0,
): LRUCache<string, V> {
  const bytesOf = typeof valueBytes === "number" ? () => valueBytes : valueBytes;
  return new LRUCache<string, V>({
    maxSize: Math.max(1, Math.floor(budgetBytes)),
    sizeCalculation: (value, key) => Math.max(1, Math.ceil(ENTRY_BYTES + bytesOf(value) + 2 * key.length)),
  });
}

/** An account's value as read, with when it was read. */
export interface TimedRead<T> {
  at: number;
  value: Promise<T>;
}

/**
 * The account's value from `cache`, read again (by `read`) once it is `maxAgeMs` old; a read that
 * fails is not kept, so the next call asks again.
 */
export function readThrough<T>(
  cache: LRUCache<string, TimedRead<T>>,
  account: string,
  options: { now: number; maxAgeMs: number },
  read: () => Promise<T>,
): Promise<T> {
  const cached = cache.get(account);
  if (cached && options.now - cached.at < options.maxAgeMs) return cached.value;
  const value = read();
  cache.set(account, { at: options.now, value });
  value.catch(() => cache.delete(account));
  return value;
}
