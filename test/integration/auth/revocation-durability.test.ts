/**
 * Key revocations wait for a replica's acknowledgement when the Redis primary
 * has replicas (docs/authentication.md "Durability"): a real primary and a real replica on loopback.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Redis } from "ioredis";
import { freePort, type StartedStore, startRedisServer } from "../../../services/dev-stack/src/stores.ts";
import { hashKey } from "../../../shared/keys/key-format.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import { keyRecordKey } from "../../../shared/redis/key-layout.ts";

describe("revocation durability with a Redis replica", () => {
  let primary: StartedStore;
  let replicaPort: number;
  let replicaStop: () => void;
  let dir: string;

  before(async function () {
    this.timeout(30_000);
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-replica-"));
    primary = await startRedisServer(path.join(dir, "primary"));
    replicaPort = await freePort();
    const primaryPort = new URL(primary.url).port;
    const child = spawn(
      "redis-server",
      [
        "--port",
        String(replicaPort),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--dir",
        dir,
        "--replicaof",
        "127.0.0.1",
        primaryPort,
      ],
      { stdio: "ignore" },
    );
    replicaStop = () => child.kill("SIGTERM");
    // Ready when the primary itself counts the replica as connected (that is what WAIT uses).
    const probe = new Redis(primary.url);
    let replicas = 0;
    for (let i = 0; i < 200 && replicas === 0; i++) {
      const role = (await probe.role()) as [string, number, unknown[]];
      replicas = role[2]?.length ?? 0;
      if (replicas === 0) await new Promise((r) => setTimeout(r, 100));
    }
    probe.disconnect();
    expect(replicas, "the replica never connected to the primary").to.equal(1);
  });
  after(async () => {
    replicaStop();
    await primary.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a disable acknowledged by the store is already on the replica", async () => {
    const redis = new Redis(primary.url);
    const replica = new Redis(replicaPort, "127.0.0.1");
    const store = new KeyStore(redis, "dur:", 60);
    const now = Date.now();
    const hash = hashKey("tsk_durability");
    await store.create(
      hash,
      {
        id: "k1",
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
    expect(await store.disable(hash)).to.equal(true);
    // No wait here: WAIT inside disable() already made the replica acknowledge.
    expect(await replica.hget(keyRecordKey("dur:", hash), "s")).to.equal("disabled");
    expect(await store.deleteById("a", "p", "k1")).to.equal(true);
    expect(await replica.exists(keyRecordKey("dur:", hash))).to.equal(0);
    redis.disconnect();
    replica.disconnect();
  });
});
