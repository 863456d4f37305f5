/**
 * The one retry policy of the write path: how long a writer waits for rows
 * other requests hold, how often a request is planned again after a conflict,
 * how long a failed request keeps undoing before it leaves the rest to
 * recovery, and the back-off between any two tries.
 */
export interface RetryPolicy {
  /** Plans of one request at most (the first and the re-plans after conflicts). */
  maxPlans: number;
  /** How long a writer waits for rows held by other requests before answering 409. */
  lockWaitMs: number;
  /** How long a failed request retries its undo while the store is away before leaving it to recovery. */
  undoWindowMs: number;
  /** Lease of a write's intent and row locks; the holder renews it every third of this. */
  leaseMs: number;
  /**
   * How long a deleted row's lock key remembers the delete. A plan older than this is planned
   * again before it commits, so a delete never goes unnoticed between a plan's read and its lock.
   */
  tombstoneMs: number;
}

export function retryPolicy(options: Partial<RetryPolicy> = {}): RetryPolicy {
  return {
    maxPlans: 8,
    lockWaitMs: 5000,
    undoWindowMs: 15_000,
    leaseMs: 15_000,
    tombstoneMs: 60_000,
    ...options,
  };
}

/** Milliseconds to wait before try `attempt` (1, 2, …): doubling from 2 ms up to 100 ms, jittered ±50 %. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return Math.min(2 ** attempt, 100) * (0.5 + random());
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
