/**
 * The webhook store's Redis steps (store/webhook-store.ts) on the real Redis:
 * entries a consumer took over that the feed no longer keeps are reported,
 * events trimmed before the group read them are counted once, and consumers of
 * processes long gone are forgotten while those holding entries are kept.
 */
import { expect } from "chai";
import {
  groupOf,
  WebhookStore,
  type WebhookSubscription,
} from "../../../services/data/src/store/webhook-store.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { feedStreamKey } from "../../../shared/redis/key-layout.ts";
import { deleteKeys, isolationPrefix, keysMatching, testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";

describe("webhook store", () => {
  let redis: RedisClient;
  let store: WebhookStore;
  const prefix = `tessera-test:${isolationPrefix()}`;
  const storage = { database: "tn_acme-1", collectionPrefix: "shop~1." };
  const feed = feedStreamKey(prefix, storage.database, storage.collectionPrefix);
  const id = "wh_000000000000000000000001";
  const subscription: WebhookSubscription = {
    id,
    account: "acme",
    project: "shop",
    projectUid: "u1",
    url: "https://93.184.215.14/hook",
    tables: ["customer"],
    verbs: ["INSERT"],
    filter: null,
    description: "",
    secret: "whsec_AAAA",
    created: new Date().toISOString(),
  };
  const append = async (n: number) => {
    for (let i = 0; i < n; i++)
      await redis.xadd(feed, "*", "tx", "t", "table", "customer", "verb", "INSERT", "key", `"k${i}"`);
  };

  before(async () => {
    redis = await testRedisClient();
    store = new WebhookStore(redis, prefix);
    await store.create({ account: "acme", project: "shop", uid: "u1", storage }, subscription, 100);
  });
  after(async () => {
    await deleteKeys(redis, await keysMatching(redis, `${prefix}*`));
    redis.disconnect();
  });

  it("updates a subscription only as it was read: another change in between, or its deletion, wins", async () => {
    const other = { ...subscription, id: "wh_000000000000000000000002" };
    await store.create({ account: "acme", project: "shop", uid: "u1", storage }, other, 100);
    const read = (await store.get(storage, other.id))!;
    const moved = { ...read, url: "https://93.184.215.14/moved" };
    expect(await store.update(storage, read, moved)).to.equal("updated");
    expect(await store.get(storage, other.id)).to.deep.equal(moved);
    // A writer that read the record before that change finds it changed, and changes nothing.
    expect(await store.update(storage, read, { ...read, description: "stale" })).to.equal("changed");
    expect(await store.get(storage, other.id)).to.deep.equal(moved);
    const groups = async () => ((await redis.xinfo("GROUPS", feed)) as string[][]).map((g) => g[1]);
    expect(await groups()).to.include(groupOf(other.id));
    expect(await store.delete(storage, other.id)).to.equal(true);
    // Deleted meanwhile: nothing comes back.
    expect(await store.update(storage, moved, { ...moved, description: "late" })).to.equal("gone");
    expect(await store.get(storage, other.id)).to.equal(null);
    expect(await groups()).to.not.include(groupOf(other.id));
  });

  it("counts events trimmed before the group read them, once", async () => {
    await append(3);
    expect(await store.readNew(storage, id, "a", "feed", 10)).to.have.length(3);
    await store.ack(
      storage,
      id,
      "feed",
      (await redis.xrange(feed, "-", "+")).map(([e]) => e),
    );
    expect(await store.trimmedUnread(storage, id)).to.equal(0);
    await append(4);
    await redis.xtrim(feed, "MAXLEN", 1);
    expect(await store.trimmedUnread(storage, id)).to.equal(3);
    expect(await store.trimmedUnread(storage, id)).to.equal(0);
    const [kept] = await store.readNew(storage, id, "a", "feed", 10);
    expect(kept).to.not.equal(undefined);
    await store.ack(storage, id, "feed", [kept![0]]);
  });

  it("reports entries it takes over that the feed no longer keeps", async () => {
    await append(2);
    const taken = await store.readNew(storage, id, "dead", "feed", 10);
    expect(taken).to.have.length(2);
    await redis.xdel(feed, taken[0]![0]);
    const over = await store.takeOver(storage, id, "b", "feed", 0, "0-0", 10);
    expect(over.deleted).to.deep.equal([taken[0]![0]]);
    expect(over.entries.map(([e]) => e)).to.deep.equal([taken[1]![0]]);
    await store.ack(storage, id, "feed", [taken[1]![0]]);
  });

  it("forgets consumers that hold nothing and were silent for long, keeps the others", async () => {
    await append(1);
    expect(await store.readNew(storage, id, "holder", "feed", 10)).to.have.length(1);
    const names = async () =>
      ((await redis.xinfo("CONSUMERS", feed, groupOf(id))) as string[][]).map((c) => c[1]).sort();
    expect(await names()).to.include.members(["a", "b", "dead", "holder"]);
    await until("the idle consumers are dropped", async () => {
      await store.dropIdleConsumers(storage, id, "feed", 20, "b");
      return JSON.stringify(await names()) === JSON.stringify(["b", "holder"]);
    });
  });
});
