/**
 * The data service's background jobs (index builds, re-sealing, sweepers, the webhook dispatcher,
 * usage metering, …): each registers itself one way, by name, with a start and a stop. The
 * composition root (service.ts) starts them in order once the app is built, and stops them in
 * reverse at close, each stop awaited before the next (a job stopped later may still use what an
 * earlier one's work needs: deliveries under way count in the usage meter, stopped after them).
 */
export interface BackgroundJob {
  start(): void;
  /** Stops the job and waits for the work under way. */
  stop(): Promise<void> | void;
}

export class BackgroundJobs {
  readonly #jobs: { name: string; job: BackgroundJob }[] = [];
  #started: { name: string; job: BackgroundJob }[] = [];

  /** Registers `job` (nothing when there is none: the job is off in this process). */
  add(name: string, job: BackgroundJob | undefined | false | null): void {
    if (job) this.#jobs.push({ name, job });
  }

  /** Registers a job that runs once (in the background) from the start; its stop waits for it. */
  once(name: string, run: () => Promise<void>): void {
    let running: Promise<void> | undefined;
    this.add(name, {
      start: () => {
        running = run();
      },
      stop: () => running,
    });
  }

  /** The names of the jobs registered, in their start order. */
  get names(): string[] {
    return this.#jobs.map((j) => j.name);
  }

  start(): void {
    for (const entry of this.#jobs) {
      entry.job.start();
      this.#started.push(entry);
    }
  }

  /** Stops the started jobs, the last started first. */
  async stop(): Promise<void> {
    const started = this.#started.reverse();
    this.#started = [];
    for (const { job } of started) await job.stop();
  }
}
