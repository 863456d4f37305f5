/**
 * Cleans up after deleted accounts and projects. Their storage is dropped at
 * the deletion, but a write that was already in flight (or served from a
 * process's cached model a moment longer) can still land afterwards and
 * create collections or a sequence under the dead names. For a while after
 * each deletion, every data-service process drops whatever reappeared there;
 * then the record of the deletion is forgotten. Storage that a live account or
 * project uses after all (a failed deletion, a restore) is never dropped. With
 * it go the deleted incarnation's records that late writes left (`purge`).
 */
import type { Logger } from "../../../../shared/logger.ts";
import type { DeletedStorageDoc, MetaStore } from "./meta-store.ts";
import { PeriodicRun } from "./periodic-run.ts";
import type { TenantStore } from "./tenant-store.ts";

/** How often each process sweeps. */
export const SWEEP_INTERVAL_MS = 30_000;
/** How long after a deletion its storage is swept: far longer than any request can be in flight. */
export const SWEEP_FOR_MS = 15 * 60_000;

export class DeletedStorageSweeper {
  readonly #meta: MetaStore;
  readonly #tenants: TenantStore;
  readonly #logger: Logger;
  readonly #sweepForMs: number;
  readonly #purge: (entry: DeletedStorageDoc) => Promise<void>;
  #periodic: PeriodicRun | undefined;
  #running: Promise<void> | undefined;
  #next: Promise<void> | undefined;

  constructor(options: {
    meta: MetaStore;
    tenants: TenantStore;
    logger: Logger;
    sweepForMs?: number;
    /** Removes the deleted incarnation's records (store/incarnation-purge.ts). */
    purge?: (entry: DeletedStorageDoc) => Promise<void>;
  }) {
    this.#meta = options.meta;
    this.#tenants = options.tenants;
    this.#logger = options.logger;
    this.#sweepForMs = options.sweepForMs ?? SWEEP_FOR_MS;
    this.#purge = options.purge ?? (async () => {});
  }

  /** Sweeps now (a process that starts after a crash catches up at once), then every interval. */
  start(intervalMs = SWEEP_INTERVAL_MS): void {
    this.#periodic = new PeriodicRun(
      () => this.sweep(),
      intervalMs,
      this.#logger,
      "deleted storage sweep failed",
    );
    this.#periodic.start();
  }

  async stop(): Promise<void> {
    await this.#periodic?.stop();
    await this.#running;
  }

  /**
   * One pass over every recorded deletion that begins after this call: a pass under way may have
   * listed the deletions before the one the caller just recorded, so it is followed by another
   * (one, however many callers wait for it).
   */
  sweep(): Promise<void> {
    if (!this.#running) {
      this.#running = this.#sweepAll().finally(() => {
        this.#running = undefined;
      });
      return this.#running;
    }
    const again = () => {
      this.#next = undefined;
      return this.sweep();
    };
    this.#next ??= this.#running.then(again, again);
    return this.#next;
  }

  async #sweepAll(): Promise<void> {
    let entries: Awaited<ReturnType<MetaStore["listDeletedStorage"]>>;
    try {
      entries = await this.#meta.listDeletedStorage();
    } catch (err) {
      this.#logger.warn({ err }, "deleted storage could not be listed; sweeping later");
      return;
    }
    for (const entry of entries) {
      try {
        if (!(await this.#meta.storageInUse(entry))) {
          if (entry.collectionPrefix === undefined)
            await this.#tenants.dropAccountStorage(
              entry.database,
              (entry.projects ?? []).flatMap((p) => p.collectionPrefix ?? []),
            );
          else
            await this.#tenants.dropProjectStorage({
              database: entry.database,
              collectionPrefix: entry.collectionPrefix,
            });
          await this.#purge(entry);
        }
        if (Date.now() - entry.deletedAt.getTime() >= this.#sweepForMs) {
          await this.#meta.forgetDeletedStorage(entry._id);
        }
      } catch (err) {
        this.#logger.warn({ err, database: entry.database }, "deleted storage not swept; trying again later");
      }
    }
  }
}
