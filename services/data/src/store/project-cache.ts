/**
 * Compiled project models, cached in each data-service process. The admin API
 * publishes a change on Redis; every process drops its copy. A periodic bulk
 * check of incarnations and revisions (one query) covers notifications missed
 * while disconnected. A deletion is published too, naming the incarnation, so
 * that every process lets go of what it holds for it (its sandbox programs).
 * The request path never touches a store for metadata once a project is warm.
 * The models kept are bounded by memory (an estimate of each, `sizeOf`), not by
 * a count: a process keeps as many projects warm as its budget holds.
 */
import { LRUCache } from "lru-cache";
import type { Logger } from "../../../../shared/logger.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import type { MetaStore, ProjectWithStorage } from "./meta-store.ts";

/** What the cache needs of a compiled model: which incarnation and revision of the project it was made from. */
export interface CachedProject {
  uid: string;
  revision: number;
}

/** An incarnation of a project that was deleted. */
export interface DeletedProject {
  account: string;
  name: string;
  uid: string;
}

/** `deleted <account> <project> <uid>` (names have no spaces). */
const deletionMessage = (p: DeletedProject) => `deleted ${p.account} ${p.name} ${p.uid}`;

function parseDeletion(message: string): DeletedProject | null {
  const [word, account, name, uid, ...rest] = message.split(" ");
  if (word !== "deleted" || !account || !name || !uid || rest.length > 0) return null;
  return { account, name, uid };
}

/** `Model`: the compiled project (domain/model/project-model.ts), made by the `compile` function it is given. */
export class ProjectCache<Model extends CachedProject> {
  /** The most recently used projects' models within the budget (one evicted is compiled again when next used). */
  readonly #entries: LRUCache<string, Model>;
  /** Models being read and compiled, by project id (one at a time per project). */
  readonly #pending = new Map<string, Promise<Model | null>>();
  readonly #meta: MetaStore;
  readonly #subscriber: RedisClient;
  readonly #publisher: RedisClient;
  readonly #channel: string;
  readonly #compile: (stored: ProjectWithStorage) => Model;
  readonly #logger: Logger;
  readonly #forget: (project: DeletedProject) => void;
  readonly #watchers = new Set<(account: string, project: string) => void>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: {
    meta: MetaStore;
    subscriber: RedisClient;
    publisher: RedisClient;
    channel: string;
    compile: (stored: ProjectWithStorage) => Model;
    logger: Logger;
    /** Told in every process when an incarnation of a project was deleted. */
    forget?: (project: DeletedProject) => void;
    /** The memory the models may take together, bytes. */
    budgetBytes: number;
    /** The cache holds a model from now on: its estimated memory, bytes. */
    held: (model: Model) => number;
    /** The cache let go of a model. */
    released?: (model: Model) => void;
  }) {
    const released = options.released ?? (() => {});
    this.#entries = new LRUCache<string, Model>({
      maxSize: Math.max(1, Math.floor(options.budgetBytes)),
      sizeCalculation: (model) => Math.max(1, options.held(model)),
      dispose: (model) => released(model),
    });
    this.#meta = options.meta;
    this.#subscriber = options.subscriber;
    this.#publisher = options.publisher;
    this.#channel = options.channel;
    this.#compile = options.compile;
    this.#logger = options.logger;
    this.#forget = options.forget ?? (() => {});
  }

  async start(revisionCheckMs = 15_000): Promise<void> {
    this.#subscriber.on("message", (channel: string, message: string) => {
      if (channel !== this.#channel) return;
      const deleted = parseDeletion(message);
      if (deleted) this.#deleted(deleted);
      else this.#drop(message);
    });
    // After a reconnect, notifications may have been missed: forget everything.
    this.#subscriber.on("ready", () => {
      this.#entries.clear();
      this.#pending.clear();
    });
    await this.#subscriber.subscribe(this.#channel);
    this.#timer = setInterval(() => void this.#checkRevisions(), revisionCheckMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  get(account: string, project: string): Promise<Model | null> {
    const id = `${account}/${project}`;
    const model = this.#entries.get(id);
    if (model) return Promise.resolve(model);
    let pending = this.#pending.get(id);
    if (!pending) {
      const compiling = this.#meta
        .getProjectWithStorage(account, project)
        .then((stored) => (stored ? this.#compile(stored) : null));
      pending = compiling;
      // Never cache failures or absence: a project created a moment later must be seen. Nor a
      // model whose project changed while it was compiled (the change dropped it from #pending).
      compiling.then(
        (compiled) => {
          if (this.#pending.get(id) !== compiling) return;
          this.#pending.delete(id);
          if (compiled) this.#entries.set(id, compiled);
        },
        () => {
          if (this.#pending.get(id) === compiling) this.#pending.delete(id);
        },
      );
      this.#pending.set(id, compiling);
    }
    return pending;
  }

  /** How many models are held, and their estimated bytes together. */
  held(): { models: number; bytes: number } {
    return { models: this.#entries.size, bytes: this.#entries.calculatedSize };
  }

  /**
   * Calls `watcher` whenever a project's model may have changed in this process (a change or a
   * deletion, from this process, another one, or the periodic check): what holds a model (a live
   * query) asks for it again. Returns the call that stops watching.
   */
  watch(watcher: (account: string, project: string) => void): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  /** Called by the admin API after it changed a project: this process and all others reload it. */
  async changed(account: string, project: string): Promise<void> {
    const id = `${account}/${project}`;
    this.#drop(id);
    await this.#publisher.publish(this.#channel, id);
  }

  /** Forgets the model of `id` (`<account>/<project>`) and tells the watchers. */
  #drop(id: string): void {
    this.#entries.delete(id);
    this.#pending.delete(id);
    const slash = id.indexOf("/");
    if (slash < 0) return;
    for (const watcher of this.#watchers) watcher(id.slice(0, slash), id.slice(slash + 1));
  }

  /** Called by the admin API after it deleted a project's incarnation `uid`: every process forgets it. */
  async deleted(account: string, project: string, uid: string): Promise<void> {
    const deleted = { account, name: project, uid };
    this.#deleted(deleted);
    // The plain name too, for processes of a release that does not know deletion messages.
    await this.#publisher.publish(this.#channel, `${account}/${project}`);
    await this.#publisher.publish(this.#channel, deletionMessage(deleted));
  }

  #deleted(project: DeletedProject): void {
    this.#drop(`${project.account}/${project.name}`);
    this.#forget(project);
  }

  async #checkRevisions(): Promise<void> {
    try {
      const cached = new Map<string, Model>(this.#entries.entries());
      if (cached.size === 0) return;
      const current = await this.#meta.incarnations([...cached.keys()]);
      for (const [id, model] of cached) {
        const now = current.get(id);
        // Deleted, deleted and created again, or changed.
        if (now?.uid !== model.uid || now.revision !== model.revision) this.#drop(id);
      }
    } catch (err) {
      this.#logger.warn({ err }, "project revision check failed");
    }
  }
}
