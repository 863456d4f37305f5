/**
 * Key records under the hash-tagged names, and the rename of records and indexes a version
 * before hash tags wrote (at the auth service's start outside Cluster mode): a key minted
 * before the upgrade still validates, keeps its expiry and stays listed and revocable.
 */
import { expect } from "chai";
import { hashKey } from "../../../shared/keys/key-format.ts";
import type { KeyRecord } from "../../../shared/keys/key-record.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { keyIndexKey, keyRecordKey } from "../../../shared/redis/key-layout.ts";
import {
  deleteKeys,
  isolationPrefix,
  keysMatching,
  testRedisClient,
  testStores,
} from "../../support/stores.ts";

const record = (id: string, now: number): KeyRecord => ({
  id,
  kind: "manual",
  account: "acme",
  project: "demo",
  projectUid: "u1",
  name: id,
  userIdentifier: null,
  roles: ["Full access"],
  globals: {},
  createdAt: now,
  expiresAt: now + 3_600_000,
  status: "active",
});

describe("key records: names with hash tags; names of the previous version renamed", () => {
  let redis: RedisClient;
  let prefix: string;
  let store: KeyStore;

  before(async () => {
    redis = await testRedisClient();
  });
  beforeEach(() => {
    prefix = `tessera-test:${isolationPrefix()}`;
    store = new KeyStore(redis, prefix, 60, { legacyNames: true });
  });
  afterEach(async () => deleteKeys(redis, await keysMatching(redis, `${prefix}*`)));
  after(() => redis.quit());

  it("a record's name carries its own hash tag; the project's index another", async () => {
    const now = Date.now();
    const hash = hashKey("tsk_layout");
    expect(await store.create(hash, record("k1", now), now)).to.equal(true);
    expect(await store.create(hash, record("k2", now), now), "the same key twice").to.equal(false);
    expect(await keysMatching(redis, `${prefix}*`)).to.have.members([
      keyRecordKey(prefix, hash),
      keyIndexKey(prefix, "acme", "demo"),
    ]);
    expect(keyRecordKey(prefix, hash)).to.equal(`${prefix}key:{${hash}}`);
    expect((await store.list("acme", "demo")).map((r) => r.id)).to.deep.equal(["k1"]);
  });

  it("until renamed, a key under the previous version's names validates, is listed, and is revoked", async function () {
    if ((await testStores()).redis.REDIS_MODE === "cluster") this.skip();
    const now = Date.now();
    const old = hashKey("tsk_old");
    const { status, ...fixed } = record("old", now);
    await redis.hset(`${prefix}key:${old}`, "d", JSON.stringify(fixed), "s", status);
    await redis.hset(`${prefix}keyidx:acme/demo`, "old", old);
    expect(await store.get(old)).to.deep.include({ id: "old", status: "active" });
    expect((await store.list("acme", "demo")).map((r) => r.id)).to.deep.equal(["old"]);
    expect(await store.disable(old)).to.equal(true);
    expect(await store.get(old)).to.deep.include({ status: "disabled" });
    expect(await store.deleteById("acme", "demo", "old")).to.equal(true);
    expect(await store.get(old)).to.equal(null);
    expect(await keysMatching(redis, `${prefix}*`)).to.deep.equal([]);
    // Without legacy names (Cluster mode) the old names are not looked at.
    await redis.hset(`${prefix}key:${old}`, "d", JSON.stringify(fixed), "s", status);
    expect(await new KeyStore(redis, prefix, 60).get(old)).to.equal(null);
  });

  it("renames the previous version's records and indexes, keeping expiry, merging an index written meanwhile", async function () {
    if ((await testStores()).redis.REDIS_MODE === "cluster") this.skip(); // a Cluster never had the old names
    const now = Date.now();
    const old = hashKey("tsk_old");
    const fresh = hashKey("tsk_new");
    const { status, ...fixed } = record("old", now);
    await redis.hset(`${prefix}key:${old}`, "d", JSON.stringify(fixed), "s", status);
    await redis.pexpire(`${prefix}key:${old}`, 3_600_000);
    await redis.hset(`${prefix}keyidx:acme/demo`, "old", old);
    await store.create(fresh, record("new", now), now);

    expect(await store.renameLegacyKeys()).to.equal(2);
    expect(await store.get(old)).to.deep.include({ id: "old", status: "active" });
    expect(await redis.pttl(keyRecordKey(prefix, old))).to.be.within(3_500_000, 3_600_000);
    expect((await store.list("acme", "demo")).map((r) => r.id)).to.have.members(["old", "new"]);
    expect(await keysMatching(redis, `${prefix}*`)).to.have.members([
      keyRecordKey(prefix, old),
      keyRecordKey(prefix, fresh),
      keyIndexKey(prefix, "acme", "demo"),
    ]);
    expect(await store.deleteById("acme", "demo", "old")).to.equal(true);
    expect(await store.get(old)).to.equal(null);
    expect(await store.renameLegacyKeys(), "nothing left to rename").to.equal(0);
  });
});
