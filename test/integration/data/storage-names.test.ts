/**
 * Deleting an account or a project while writes are in flight, then creating
 * one of the same name: the successor starts empty (rows and generated keys),
 * whatever the late writes of the deleted one did, and the sweeper drops what
 * those writes left under the dead names. Accounts and projects recorded
 * before storage names had incarnation ids keep their old names.
 */
import { createHash } from "node:crypto";
import { expect } from "chai";
import { MongoClient } from "mongodb";
import type { TenantStorage } from "../../../services/data/src/store/storage-names.ts";
import { DeletedStorageSweeper } from "../../../services/data/src/store/storage-sweeper.ts";
import { createLogger } from "../../../shared/logger.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { feedStreamKey } from "../../../shared/redis/key-layout.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { testRedisClient, testStores } from "../../support/stores.ts";
import { until } from "../../support/until.ts";

const WRITERS = 20;

describe("storage of deleted accounts and projects", function () {
  this.timeout(120_000);
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let mongo: MongoClient;
  let redis: RedisClient;

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    const { mongoUrl } = await testStores();
    mongo = await new MongoClient(mongoUrl).connect();
    redis = await testRedisClient();
  });
  after(async () => {
    await mongo.close();
    redis.disconnect();
    await platform.close();
  });

  const sequenceKey = (database: string) => `${platform.dataConfig.REDIS_PREFIX}seq:${database}`;
  const feedKey = (storage: TenantStorage) =>
    feedStreamKey(platform.dataConfig.REDIS_PREFIX, storage.database, storage.collectionPrefix);

  async function storageOf(account: string, project: string): Promise<TenantStorage> {
    const model = await platform.data.deps.projects.get(account, project);
    if (!model) throw new Error(`no project ${account}/${project}`);
    return model.storage;
  }

  async function databaseNames(): Promise<string[]> {
    const { databases } = await mongo.db("admin").command({ listDatabases: 1, nameOnly: true });
    return (databases as { name: string }[]).map((d) => d.name);
  }

  async function collectionNames(database: string): Promise<string[]> {
    const list = await mongo.db(database).listCollections({}, { nameOnly: true }).toArray();
    return list.map((c) => c.name);
  }

  /** What a write that was in flight at the deletion does to the dead names: a row and a sequence. */
  async function lateWrite(storage: TenantStorage): Promise<void> {
    await mongo
      .db(storage.database)
      .collection<{ _id: string }>(`${storage.collectionPrefix}customer`)
      .insertOne({ _id: "Late", name: "Late", _ck: "0123456789abcdef" } as { _id: string });
    await redis.hset(sequenceKey(storage.database), `${storage.collectionPrefix}purchaseorder`, "7");
    await redis.xadd(
      feedKey(storage),
      "*",
      "tx",
      "late",
      "table",
      "customer",
      "verb",
      "INSERT",
      "key",
      '"Late"',
    );
  }

  /** Creates the project (and the account when asked) and returns a full-access key of it. */
  async function createProject(account: string, project: string, withAccount: boolean): Promise<string> {
    if (withAccount) expect((await admin.putAccount(account)).status).to.equal(201);
    expect((await admin.putProject(account, project, demoProject())).status).to.equal(201);
    const key = await admin.createKey(account, project, { name: "writer", roles: ["Full access"] });
    expect(key.status).to.equal(201);
    return key.body.apikey as string;
  }

  /**
   * Creates the project, then deletes it (DELETE `deletePath`) and creates it again while WRITERS
   * clients keep inserting customers and orders with the old key. Checks that the successor is
   * empty, lets one more late write reach the dead names, and sweeps.
   */
  async function replaceUnderLoad(account: string, project: string, deletePath: string) {
    const api = projectClient(platform.baseUrl, account, project);
    const key = await createProject(account, project, true);
    const dead = await storageOf(account, project);
    expect((await api.post(key, "customer", { name: "Jones" })).status).to.equal(201);
    let stop = false;
    let landed = 0;
    /** Each writer's requests answered so far. */
    const answered = new Array<number>(WRITERS).fill(0);
    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const r =
          i % 2 === 0
            ? await api.post(key, "customer", { name: `w${w}-${i}` })
            : await api.post(key, "purchaseorder", { customer_name: "Jones", amount_total: i });
        answered[w] = (answered[w] ?? 0) + 1;
        if (r.status === 201) landed++;
        // Refused (the project is gone or replaced): pause instead of spinning.
        else await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });
    await until("each writer's first writes landed", async () => landed >= WRITERS * 2);
    expect((await admin.send("DELETE", deletePath)).status).to.equal(200);
    const newKey = await createProject(account, project, deletePath === `/accounts/${account}`);
    // Writes that were in flight during the replacement land: each writer's request under way is
    // answered, and so is one it sent after.
    const sent = [...answered];
    await until("every writer's writes of the replacement answered", async () =>
      answered.every((n, w) => n >= (sent[w] ?? 0) + 2),
    );
    stop = true;
    await Promise.all(writers);

    const customers = await api.get(newKey, "customer?pagesize=1000");
    expect(customers.status).to.equal(200);
    expect(customers.body, "customers of the successor").to.deep.equal([]);
    const orders = await api.get(newKey, "purchaseorder?pagesize=1000");
    expect(orders.body, "orders of the successor").to.deep.equal([]);
    expect((await api.post(newKey, "customer", { name: "Jones" })).status).to.equal(201);
    const first = await api.post(newKey, "purchaseorder", { customer_name: "Jones" });
    expect(first.status).to.equal(201);
    expect(first.body.txsummary[0].order_number, "first generated key of the successor").to.equal(1);

    // Whatever late writes leave under the dead names goes with the next sweep. The first sweep
    // drops what the writers left (on FerretDB over SQLite, writes racing a drop can also leave the
    // dropped database's files unusable until it is dropped again); then one write later still.
    await platform.data.sweeper.sweep();
    await lateWrite(dead);
    await platform.data.sweeper.sweep();
    return { api, newKey, dead, live: await storageOf(account, project) };
  }

  it("an account deleted under 20 concurrent writers and created again is empty", async () => {
    const { api, newKey, dead, live } = await replaceUnderLoad("acme", "demo", "/accounts/acme");
    expect(live.database).not.to.equal(dead.database);
    const databases = await databaseNames();
    expect(databases).not.to.include(dead.database);
    expect(databases).to.include(live.database);
    expect(await redis.exists(sequenceKey(dead.database))).to.equal(0);
    expect(await redis.exists(sequenceKey(live.database))).to.equal(1);
    expect(await redis.exists(feedKey(dead)), "the deleted project's change feed").to.equal(0);
    expect(await redis.exists(feedKey(live))).to.equal(1);
    expect((await api.get(newKey, "customer")).body).to.have.length(1);
  });

  it("a project deleted under 20 concurrent writers and created again is empty", async () => {
    const { dead, live } = await replaceUnderLoad("globex", "shop", "/accounts/globex/projects/shop");
    expect(live.database).to.equal(dead.database);
    expect(live.collectionPrefix).not.to.equal(dead.collectionPrefix);
    const collections = await collectionNames(live.database);
    expect(collections.filter((c) => c.startsWith(dead.collectionPrefix))).to.deep.equal([]);
    expect(collections.filter((c) => c.startsWith(live.collectionPrefix))).not.to.deep.equal([]);
    const fields = await redis.hkeys(sequenceKey(live.database));
    expect(fields).to.deep.equal([`${live.collectionPrefix}purchaseorder`]);
    expect(await redis.exists(feedKey(dead)), "the deleted project's change feed").to.equal(0);
    expect(await redis.exists(feedKey(live))).to.equal(1);
  });

  it("never drops storage that a live account uses, and forgets deletions after a while", async () => {
    const { meta, tenants } = platform.data.deps;
    const api = projectClient(platform.baseUrl, "acme", "demo");
    const key = (await admin.createKey("acme", "demo", { name: "reader", roles: ["Full access"] })).body
      .apikey;
    const live = await storageOf("acme", "demo");
    // A deletion that failed after it was recorded leaves a record of storage still in use.
    await meta.recordDeletedStorage({ account: "acme", database: live.database });
    await meta.recordDeletedStorage({
      account: "globex",
      project: "shop",
      ...(await storageOf("globex", "shop")),
    });
    const forgetful = new DeletedStorageSweeper({
      meta,
      tenants,
      logger: createLogger("sweeper", "silent"),
      sweepForMs: 0,
    });
    await forgetful.sweep();
    expect((await api.get(key, "customer")).body).to.have.length(1);
    expect(await collectionNames(live.database)).to.include(`${live.collectionPrefix}customer`);
    expect(await meta.listDeletedStorage()).to.deep.equal([]);
  });

  describe("an account and project recorded before storage names had incarnation ids", () => {
    // The names every release before this one used: derived from the account and project names alone.
    const legacyDatabase = () =>
      `${platform.prefix}legacy_${createHash("sha256").update("Legacy").digest("hex").slice(0, 8)}`;
    const api = () => projectClient(platform.baseUrl, "Legacy", "old");
    let key: string;

    before(async () => {
      key = await createProject("Legacy", "old", true);
      const metaDb = mongo.db(platform.dataConfig.META_DB);
      await metaDb
        .collection<{ _id: string }>("accounts")
        .updateOne({ _id: "Legacy" }, { $unset: { database: "" } });
      await metaDb
        .collection<{ _id: string }>("projects")
        .updateOne({ _id: "Legacy/old" }, { $unset: { collectionPrefix: "" } });
      const db = mongo.db(legacyDatabase());
      await db.collection<{ _id: string }>("old.customer").insertOne({
        _id: "Jones",
        name: "Jones",
        balance: 0,
        credit_limit: 0,
        _ck: "0123456789abcdef",
      } as { _id: string });
      await db.collection<{ _id: number }>("old.purchaseorder").insertOne({
        _id: 41,
        order_number: 41,
        customer_name: "Jones",
        amount_total: 5,
        paid: false,
        _ck: "0123456789abcdef",
      } as { _id: number });
      await redis.hset(sequenceKey(legacyDatabase()), "old.purchaseorder", "41");
      // Every process reloads the project (as after an upgrade).
      await platform.data.deps.projects.changed("Legacy", "old");
    });

    it("reads and writes its rows and sequences under the old names", async () => {
      expect(await storageOf("Legacy", "old")).to.deep.equal({
        database: legacyDatabase(),
        collectionPrefix: "old.",
      });
      expect((await api().get(key, "customer")).body.map((c: { name: string }) => c.name)).to.deep.equal([
        "Jones",
      ]);
      const inserted = await api().post(key, "purchaseorder", { customer_name: "Jones" });
      expect(inserted.status).to.equal(201);
      expect(inserted.body.txsummary[0].order_number).to.equal(42);
      expect(await mongo.db(legacyDatabase()).collection("old.purchaseorder").countDocuments()).to.equal(2);
    });

    it("is deleted with its old database, and created again under new names", async () => {
      expect((await admin.send("DELETE", "/accounts/Legacy")).status).to.equal(200);
      expect(await databaseNames()).not.to.include(legacyDatabase());
      expect(await redis.exists(sequenceKey(legacyDatabase()))).to.equal(0);
      const deleted = await platform.data.deps.meta.listDeletedStorage();
      expect(deleted.map((d) => d.database)).to.include(legacyDatabase());
      const newKey = await createProject("Legacy", "old", true);
      const storage = await storageOf("Legacy", "old");
      expect(storage.database).to.match(new RegExp(`^${platform.prefix}legacy-[0-9a-f]{12}$`));
      expect(storage.collectionPrefix).to.match(/^old~[0-9a-f]{12}\.$/);
      expect((await api().get(newKey, "customer")).body).to.deep.equal([]);
    });
  });
});
