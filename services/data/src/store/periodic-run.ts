/**
 * A background job every data-service process runs at start-up and then once per interval
 * (intent recovery, the feed outbox sweeper, the deleted-storage sweeper): one run at a time, the next one an interval after
 * the last ended, a failed run logged by its error's name only (messages can quote data) and
 * tried again at the next. The timer does not keep the process alive.
 */
import type { Logger } from "../../../../shared/logger.ts";

export class PeriodicRun {
  readonly #run: () => Promise<unknown>;
  readonly #intervalMs: number;
  readonly #logger: Logger;
  readonly #failure: string;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  /** `failure`: the log line of a failed run. */
  constructor(run: () => Promise<unknown>, intervalMs: number, logger: Logger, failure: string) {
    this.#run = run;
    this.#intervalMs = intervalMs;
    this.#logger = logger;
    this.#failure = failure;
  }

  /** Whether `stop()` was called: a run in progress ends its work early. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Runs now, then every interval until `stop()`. */
  start(): void {
    this.#stopped = false;
    this.#tick();
  }

  /** Stops the periodic runs and waits for the current one. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #tick(): void {
    this.#running = this.#run()
      .then(() => undefined)
      .catch((err: unknown) =>
        this.#logger.warn({ error: err instanceof Error ? err.name : typeof err }, this.#failure),
      )
      .finally(() => {
        if (this.#stopped) return;
        this.#timer = setTimeout(() => this.#tick(), this.#intervalMs);
        this.#timer.unref();
      });
  }
}
