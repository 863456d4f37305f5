/**
 * A project's deletion reaches every data-service process (real Redis pub/sub,
 * two caches standing for two processes): each forgets the deleted
 * incarnation (the data service drops that incarnation's sandbox programs
 * then), while a mere change of a project forgets nothing.
 */
import { expect } from "chai";
import type { MetaStore } from "../../../services/data/src/store/meta-store.ts";
import type { DeletedProject } from "../../../services/data/src/store/project-cache.ts";
import { ProjectCache } from "../../../services/data/src/store/project-cache.ts";
import { createLogger } from "../../../shared/logger.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { projectChangedChannel } from "../../../shared/redis/key-layout.ts";
import { isolationPrefix, testRedisClient } from "../../support/stores.ts";

describe("project deletion notices", () => {
  const clients: RedisClient[] = [];
  const caches: ProjectCache<{ uid: string; revision: number }>[] = [];

  /** One process's cache; answers what it was told to forget, and a wait for the next one. */
  async function processCache(channel: string) {
    const forgotten: DeletedProject[] = [];
    let told: () => void = () => {};
    const subscriber = await testRedisClient();
    const publisher = await testRedisClient();
    clients.push(subscriber, publisher);
    const cache = new ProjectCache({
      // Never asked: nothing is read through these caches here.
      meta: {} as MetaStore,
      subscriber,
      publisher,
      channel,
      compile: () => ({ uid: "", revision: 0 }),
      budgetBytes: 1024 * 1024,
      held: () => 1024,
      logger: createLogger("data", "silent"),
      forget: (project) => {
        forgotten.push(project);
        told();
      },
    });
    await cache.start(3_600_000);
    caches.push(cache);
    const next = () => new Promise<void>((resolve) => (told = resolve));
    return { cache, forgotten, next };
  }

  after(async () => {
    for (const cache of caches) cache.stop();
    await Promise.all(clients.map((c) => c.quit()));
  });

  it("every process forgets the deleted incarnation, and nothing on a mere change", async () => {
    const channel = projectChangedChannel(`tessera-test:${isolationPrefix()}`);
    const here = await processCache(channel);
    const there = await processCache(channel);
    const heard = there.next();
    await here.cache.changed("acme", "shop");
    await here.cache.deleted("acme", "shop", "uid-1");
    await heard;
    const deleted = { account: "acme", name: "shop", uid: "uid-1" };
    // The deleting process forgets at once (and once more when it hears its own notice).
    expect(here.forgotten[0]).to.deep.equal(deleted);
    expect(there.forgotten).to.deep.equal([deleted]);
  });
});
