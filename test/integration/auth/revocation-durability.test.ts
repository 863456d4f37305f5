/**
 * Key revocations wait for a replica's acknowledgement when the Redis primary
 * has replicas (docs/authentication.md "Durability"): a real primary and a real replica on loopback.
 * A revocation no replica acknowledges in time (the replica is stopped) is answered and reported.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Redis } from "ioredis";
import { type StartedStore, startRedisServer } from "../../../services/dev-stack/src/stores.ts";
import { hashKey } from "../../../shared/key-format.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import { keyRecordKey } from "../../../shared/redis/key-layout.ts";
import { type RedisProcess, startRedisProcess } from "../../support/redis-topologies.ts";
import { until } from "../../support/until.ts";

describe("revocation durability with a Redis replica", () => {
  let primary: StartedStore;
  let replica: RedisProcess;
  let dir: string;

  before(async function () {
    this.timeout(30_000);
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-replica-"));
    primary = await startRedisServer(path.join(dir, "primary"));
    replica = await startRedisProcess(path.join(dir, "replica"), [
      "--save",
      "",
      "--replicaof",
      "127.0.0.1",
      new URL(primary.url).port,
    ]);
    // Ready when the primary itself counts the replica as connected (that is what WAIT uses).
    const probe = new Redis(primary.url);
    await until("the primary counts its replica as connected", async () => {
      const role = (await probe.role()) as [string, number, unknown[]];
      return (role[2]?.length ?? 0) === 1;
    });
    probe.disconnect();
  });
  after(async () => {
    replica.child.kill("SIGCONT");
    await replica.stop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a disable acknowledged by the store is already on the replica", async () => {
    const redis = new Redis(primary.url);
    const replicaClient = new Redis(replica.port, "127.0.0.1");
    let unacknowledged = 0;
    const store = new KeyStore(redis, "dur:", 60, { onUnacknowledged: () => unacknowledged++ });
    const hash = await createKey(store, "tsk_durability", "k1");
    expect(await store.disable(hash)).to.equal(true);
    // No wait here: WAIT inside disable() already made the replica acknowledge.
    expect(await replicaClient.hget(keyRecordKey("dur:", hash), "s")).to.equal("disabled");
    expect(await store.deleteById("a", "p", "k1")).to.equal(true);
    expect(await replicaClient.exists(keyRecordKey("dur:", hash))).to.equal(0);
    expect(unacknowledged, "both acknowledged").to.equal(0);
    redis.disconnect();
    replicaClient.disconnect();
  });

  it("a revocation no replica acknowledges in time is answered, and reported", async function () {
    this.timeout(20_000);
    const redis = new Redis(primary.url);
    let unacknowledged = 0;
    const store = new KeyStore(redis, "dur:", 60, { onUnacknowledged: () => unacknowledged++ });
    const hash = await createKey(store, "tsk_unacknowledged", "k2");
    replica.child.kill("SIGSTOP"); // still connected, as the primary sees it, but acknowledging nothing
    try {
      expect(await store.disable(hash)).to.equal(true);
      expect(unacknowledged).to.equal(1);
      expect(await redis.hget(keyRecordKey("dur:", hash), "s"), "revoked on the primary").to.equal(
        "disabled",
      );
    } finally {
      replica.child.kill("SIGCONT");
      redis.disconnect();
    }
  });
});

async function createKey(store: KeyStore, apikey: string, id: string): Promise<string> {
  const now = Date.now();
  const hash = hashKey(apikey);
  await store.create(
    hash,
    {
      id,
      kind: "manual",
      account: "a",
      project: "p",
      projectUid: "u",
      name: "n",
      userIdentifier: null,
      roles: [],
      globals: {},
      createdAt: now,
      expiresAt: null,
      status: "active",
    },
    now,
  );
  return hash;
}
