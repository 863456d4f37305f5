/**
 * Wakes what waits in this process for a change of one key (e.g. attempts waiting for a
 * verdict on their subject): `next(key, ms)` resolves at the next `notify(key)`, or after `ms`.
 */
export class SettledSignal {
  readonly #waiting = new Map<string, Set<() => void>>();

  next(key: string, ms: number): Promise<void> {
    const waiters = this.#waiting.get(key) ?? new Set<() => void>();
    this.#waiting.set(key, waiters);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0 && this.#waiting.get(key) === waiters) this.#waiting.delete(key);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      waiters.add(wake);
    });
  }

  notify(key: string): void {
    for (const wake of [...(this.#waiting.get(key) ?? [])]) wake();
  }
}
