/**
 * Compiled project models, cached in each data-service process. The admin API
 * publishes a change on Redis; every process drops its copy. A periodic bulk
 * revision check (one query) covers notifications missed while disconnected.
 * The request path never touches a store for metadata once a project is warm.
 */
import type { Redis } from "ioredis";
import type { Logger } from "../../../../shared/logger.ts";
import type { ProjectModel } from "../domain/project-model.ts";
import type { MetaStore, StoredProject } from "./meta-store.ts";

export class ProjectCache {
  readonly #entries = new Map<string, Promise<ProjectModel | null>>();
  readonly #meta: MetaStore;
  readonly #subscriber: Redis;
  readonly #publisher: Redis;
  readonly #channel: string;
  readonly #compile: (stored: StoredProject) => ProjectModel;
  readonly #logger: Logger;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: {
    meta: MetaStore;
    subscriber: Redis;
    publisher: Redis;
    channel: string;
    compile: (stored: StoredProject) => ProjectModel;
    logger: Logger;
  }) {
    this.#meta = options.meta;
    this.#subscriber = options.subscriber;
    this.#publisher = options.publisher;
    this.#channel = options.channel;
    this.#compile = options.compile;
    this.#logger = options.logger;
  }

  async start(revisionCheckMs = 15_000): Promise<void> {
    this.#subscriber.on("message", (channel: string, id: string) => {
      if (channel === this.#channel) this.#entries.delete(id);
    });
    // After a reconnect, notifications may have been missed: forget everything.
    this.#subscriber.on("ready", () => this.#entries.clear());
    await this.#subscriber.subscribe(this.#channel);
    this.#timer = setInterval(() => void this.#checkRevisions(), revisionCheckMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  get(account: string, project: string): Promise<ProjectModel | null> {
    const id = `${account}/${project}`;
    let entry = this.#entries.get(id);
    if (!entry) {
      entry = this.#meta
        .getProject(account, project)
        .then((stored) => (stored ? this.#compile(stored) : null));
      // Never cache failures or absence: a project created a moment later must be seen.
      entry.then(
        (model) => {
          if (!model) this.#entries.delete(id);
        },
        () => this.#entries.delete(id),
      );
      this.#entries.set(id, entry);
    }
    return entry;
  }

  /** Called by the admin API after it changed a project: this process and all others reload it. */
  async changed(account: string, project: string): Promise<void> {
    const id = `${account}/${project}`;
    this.#entries.delete(id);
    await this.#publisher.publish(this.#channel, id);
  }

  async #checkRevisions(): Promise<void> {
    try {
      const cached = new Map<string, number>();
      for (const [id, entry] of this.#entries) {
        const model = await entry.catch(() => null);
        if (model) cached.set(id, model.revision);
      }
      if (cached.size === 0) return;
      const current = await this.#meta.revisions([...cached.keys()]);
      for (const [id, revision] of cached) {
        if (current.get(id) !== revision) this.#entries.delete(id);
      }
    } catch (err) {
      this.#logger.warn({ err }, "project revision check failed");
    }
  }
}
