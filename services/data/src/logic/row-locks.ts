/**
 * In-process row locks for write retries. Every write is guarded by the
 * checksum read at planning time, so a concurrent change to a row makes the
 * commit fail (and undo) instead of losing an update. When that happens the
 * request is planned again while holding locks on the rows it writes, so
 * requests of this process that adjust the same parent take turns instead of
 * conflicting again; requests from other processes are still caught by the
 * checksum guard (and retried with a jittered back-off).
 *
 * Keys are acquired in sorted order, so two holders never wait for each other.
 */

const tails = new Map<string, Promise<void>>();

/** True when another request of this process holds one of `keys`. */
export function anyLocked(keys: Iterable<string>): boolean {
  for (const k of keys) if (tails.has(k)) return true;
  return false;
}

/** Waits for and takes every lock in `keys`; resolves to the function that releases them. */
export async function lockRows(keys: Iterable<string>): Promise<() => void> {
  const sorted = [...new Set(keys)].sort();
  const releases: (() => void)[] = [];
  for (const k of sorted) {
    const previous = tails.get(k) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    tails.set(k, tail);
    releases.push(() => {
      release();
      if (tails.get(k) === tail) tails.delete(k);
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
