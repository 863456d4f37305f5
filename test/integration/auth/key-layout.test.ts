/**
 * Key records under the hash-tagged names, and the rename of records and indexes a version
 * before hash tags wrote (at the auth service's start outside Cluster mode): a key minted
 * before the upgrade still validates, keeps its expiry and stays listed and revocable.
 */
import { expect } from "chai";
import { hashKey } from "../../../shared/key-format.ts";
import type { KeyRecord } from "../../../shared/keys/key-record.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import {
  keyActiveKey,
  keyIndexExpiryKey,
  keyIndexKey,
  keyRecordKey,
} from "../../../shared/redis/key-layout.ts";
import {
  deleteKeys,
  isolationPrefix,
  keysMatching,
  testRedisClient,
  testStores,
} from "../../support/stores.ts";
import { until } from "../../support/until.ts";

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
      keyIndexExpiryKey(prefix, "acme", "demo"),
      keyActiveKey(prefix, "acme", "demo"),
    ]);
    expect(keyRecordKey(prefix, hash)).to.equal(`${prefix}key:{${hash}}`);
    expect((await store.list("acme", "demo", now)).map((r) => r.id)).to.deep.equal(["k1"]);
  });

  it("until renamed, a key under the previous version's names validates, is listed, and is revoked", async function () {
    if ((await testStores()).redis.REDIS_MODE === "cluster") this.skip();
    const now = Date.now();
    const old = hashKey("tsk_old");
    const { status, ...fixed } = record("old", now);
    await redis.hset(`${prefix}key:${old}`, "d", JSON.stringify(fixed), "s", status);
    await redis.hset(`${prefix}keyidx:acme/demo`, "old", old);
    expect(await store.get(old)).to.deep.include({ id: "old", status: "active" });
    expect((await store.list("acme", "demo", now)).map((r) => r.id)).to.deep.equal(["old"]);
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
    expect((await store.list("acme", "demo", now)).map((r) => r.id)).to.have.members(["old", "new"]);
    expect(await keysMatching(redis, `${prefix}*`)).to.have.members([
      keyRecordKey(prefix, old),
      keyRecordKey(prefix, fresh),
      keyIndexKey(prefix, "acme", "demo"),
      keyIndexExpiryKey(prefix, "acme", "demo"),
      keyActiveKey(prefix, "acme", "demo"),
    ]);
    expect(await store.deleteById("acme", "demo", "old")).to.equal(true);
    expect(await store.get(old)).to.equal(null);
    expect(await store.renameLegacyKeys(), "nothing left to rename").to.equal(0);
  });

  describe("the project's key index forgets keys Redis forgot", () => {
    /** A key record of `lifetimeMs` (null: one that never expires). */
    const expiring = (id: string, now: number, lifetimeMs: number | null): KeyRecord => ({
      ...record(id, now),
      expiresAt: lifetimeMs === null ? null : now + lifetimeMs,
    });
    /** The ids in the project's index, as Redis holds it. */
    const indexed = async () => Object.keys(await redis.hgetall(keyIndexKey(prefix, "acme", "demo"))).sort();

    it("a key leaves the index at its expiry plus the retention; keys without expiry stay", async () => {
      const store = new KeyStore(redis, prefix, 60);
      const t0 = Date.now();
      await store.create(hashKey("tsk_short"), expiring("short", t0, 1_000), t0);
      await store.create(hashKey("tsk_forever"), expiring("forever", t0, null), t0);
      await store.create(hashKey("tsk_long"), expiring("long", t0, 3_600_000), t0);
      const retained = t0 + 1_000 + 59_000; // expired, still on record for the retention
      await store.create(hashKey("tsk_a"), expiring("a", retained, 3_600_000), retained);
      expect(await indexed(), "expired, still on record").to.include("short");
      const gone = t0 + 1_000 + 60_000;
      await store.create(hashKey("tsk_b"), expiring("b", gone, 3_600_000), gone);
      expect(await indexed()).to.deep.equal(["a", "b", "forever", "long"]);
      expect(
        await redis.pttl(keyIndexKey(prefix, "acme", "demo")),
        "no expiry while a key has none",
      ).to.equal(-1);
    });

    it("listing drops what has gone too", async () => {
      const store = new KeyStore(redis, prefix, 0);
      const t0 = Date.now();
      for (let i = 0; i < 5; i++) await store.create(hashKey(`tsk_${i}`), expiring(`k${i}`, t0, 1_000), t0);
      await store.create(hashKey("tsk_forever"), expiring("forever", t0, null), t0);
      expect((await store.list("acme", "demo", t0 + 1_000)).map((r) => r.id)).to.deep.equal(["forever"]);
      expect(await indexed()).to.deep.equal(["forever"]);
    });

    it("100 logins' keys expire: the project's index goes from Redis with them", async () => {
      const store = new KeyStore(redis, prefix, 0);
      const t0 = Date.now();
      for (let i = 0; i < 100; i++) await store.create(hashKey(`tsk_${i}`), expiring(`k${i}`, t0, 200), t0);
      expect(await indexed()).to.have.length(100);
      // Nothing writes or lists any more: Redis's own expiry must take the index away.
      await until("every key gone", async () => (await keysMatching(redis, `${prefix}*`)).length === 0);
    });

    it("an index written before expiry was indexed is scored at its first listing, then trimmed", async () => {
      const store = new KeyStore(redis, prefix, 0);
      const t0 = Date.now();
      for (const id of ["old", "older"]) {
        const { status, ...fixed } = expiring(id, t0, id === "old" ? 3_600_000 : 1_000);
        await redis.hset(keyRecordKey(prefix, hashKey(`tsk_${id}`)), "d", JSON.stringify(fixed), "s", status);
        await redis.hset(keyIndexKey(prefix, "acme", "demo"), id, hashKey(`tsk_${id}`));
      }
      expect((await store.list("acme", "demo", t0)).map((r) => r.id)).to.deep.equal(["old", "older"]);
      await store.create(hashKey("tsk_new"), expiring("new", t0 + 2_000, 3_600_000), t0 + 2_000);
      expect(await indexed()).to.deep.equal(["new", "old"]);
    });
  });
});
