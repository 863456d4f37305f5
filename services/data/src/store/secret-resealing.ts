/**
 * Sealing again what is stored under an older SECRETS_KEY (or as it was, before there was a key),
 * so that an older key can be retired (docs/operations.md §9): one job every data process with a
 * key runs at start-up and then every RESEAL_INTERVAL_MS. Each run walks the provider secrets of
 * stored definitions (project and revision records) and the signing secrets of every webhook
 * subscription. A record changed meanwhile, or a secret that does not open here (sealed under a key
 * this process lacks: its deliveries and logins say why), is left as it is for a later run.
 */
import type { Logger } from "../../../../shared/logger.ts";
import { PeriodicRun } from "./periodic-run.ts";
import { type SecretBox, SecretBoxError } from "./secret-box.ts";
import type { TenantStorage } from "./storage-names.ts";
import type { WebhookStore, WebhookSubscription } from "./webhook-store.ts";

/** How often each process looks again (the first run is at start-up). */
export const RESEAL_INTERVAL_MS = 5 * 60_000;

/** A store of definition records that seals theirs again; how many records changed. */
export interface SealedDefinitions {
  resealDefinitions(): Promise<number>;
}

export interface ResealingDeps {
  secrets: SecretBox;
  projects: SealedDefinitions;
  revisions: SealedDefinitions;
  /** The webhook store (none without the change feed). */
  webhooks: WebhookStore | undefined;
  logger: Logger;
  intervalMs?: number;
}

export class SecretResealing {
  readonly #deps: ResealingDeps;
  readonly #periodic: PeriodicRun;

  constructor(deps: ResealingDeps) {
    this.#deps = deps;
    this.#periodic = new PeriodicRun(
      () => this.run(),
      deps.intervalMs ?? RESEAL_INTERVAL_MS,
      deps.logger,
      "secrets not sealed again; the next run tries again",
    );
  }

  start(): void {
    this.#periodic.start();
  }

  stop(): Promise<void> {
    return this.#periodic.stop();
  }

  /** One run: definitions, then webhook subscriptions. */
  async run(): Promise<void> {
    await this.#definitions();
    await this.#subscriptions();
  }

  async #definitions(): Promise<void> {
    const { projects: projectRecords, revisions: revisionRecords, logger } = this.#deps;
    try {
      const projects = await projectRecords.resealDefinitions();
      const revisions = await revisionRecords.resealDefinitions();
      if (projects + revisions > 0)
        logger.info({ projects, revisions }, "definitions' secrets sealed under the current SECRETS_KEY");
    } catch (err) {
      logger.warn(
        { error: err instanceof Error ? err.name : typeof err },
        "definitions' secrets not sealed again; the next run tries again",
      );
    }
  }

  async #subscriptions(): Promise<void> {
    const store = this.#deps.webhooks;
    if (!store || this.#periodic.stopped) return;
    for (const project of await store.projects())
      for (const subscription of await store.list(project.storage)) {
        if (this.#periodic.stopped) return;
        await this.#resealed(store, project.storage, subscription);
      }
  }

  /**
   * Seals the subscription's secrets under the current key, when one is stored as it was or under
   * a key the operator has since put a new one in front of.
   */
  async #resealed(
    store: WebhookStore,
    storage: TenantStorage,
    subscription: WebhookSubscription,
  ): Promise<void> {
    const box = this.#deps.secrets;
    try {
      const secret = box.reseal(subscription.secret);
      const previous = subscription.previousSecret;
      const previousSecret = previous && box.reseal(previous.secret);
      if (secret === undefined && previousSecret === undefined) return;
      await store.update(storage, subscription, {
        ...subscription,
        secret: secret ?? subscription.secret,
        ...(previous ? { previousSecret: { ...previous, secret: previousSecret ?? previous.secret } } : {}),
      });
    } catch (err) {
      if (!(err instanceof SecretBoxError))
        this.#deps.logger.warn(
          { subscription: subscription.id, error: err instanceof Error ? err.message : String(err) },
          "a webhook subscription's secret could not be sealed again; trying at the next run",
        );
    }
  }
}
