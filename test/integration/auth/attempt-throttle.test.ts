/**
 * The attempt throttle on real Redis, with a clock the test moves: reservations
 * before verification, what each outcome gives back, the exponential lock and
 * the per-address ceiling. Generic over what is throttled: subjects are opaque.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { AttemptThrottle, type ReserveResult } from "../../../services/auth/src/store/attempt-throttle.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { createRedisClient } from "../../../shared/redis/clients.ts";
import { startRedisProcess } from "../../support/redis-topologies.ts";
import { isolationPrefix, testRedisClient, testStores } from "../../support/stores.ts";

describe("attempt throttle", () => {
  let redis: RedisClient;
  let now = 1_700_000_000_000;
  const throttle = (perAddressPerHour = 1000) =>
    new AttemptThrottle(
      redis,
      `tessera-test:${isolationPrefix()}throttle:`,
      { failuresBeforeLockout: 3, baseSeconds: 2, maxSeconds: 8, perAddressPerHour },
      () => now,
    );
  const reserved = (r: ReserveResult) => {
    if (!r.ok) throw new Error(`refused for ${r.retryAfterSeconds} s`);
    return r.reservation;
  };

  before(async () => {
    redis = await testRedisClient();
  });
  after(() => redis.disconnect());

  it("reserves at most N attempts in parallel; the N-th locks at once, before any verdict", async () => {
    const t = throttle();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => t.reserve({ subject: "u", address: "a" })),
    );
    expect(results.filter((r) => r.ok)).to.have.length(3);
    for (const r of results.filter((r) => !r.ok)) expect(r).to.deep.include({ retryAfterSeconds: 2 });
  });

  it("a failure keeps its slot and renews the lock from its own time; the lock doubles up to the cap", async () => {
    const t = throttle();
    const scope = { subject: "u", address: "a" };
    for (let i = 0; i < 3; i++) await reserved(await t.reserve(scope)).failed();
    expect(await t.reserve(scope)).to.deep.equal({ ok: false, retryAfterSeconds: 2 });
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      now += 60_000;
      const attempt = reserved(await t.reserve(scope));
      now += 500; // the verdict comes later; the lock runs from then
      await attempt.failed();
      const refused = await t.reserve(scope);
      waits.push(refused.ok ? 0 : refused.retryAfterSeconds);
    }
    expect(waits).to.deep.equal([4, 8, 8, 8]);
  });

  it("a success resets the subject; other subjects are independent", async () => {
    const t = throttle();
    for (let i = 0; i < 2; i++) await reserved(await t.reserve({ subject: "u", address: "a" })).failed();
    reserved(await t.reserve({ subject: "other", address: "a" }));
    await reserved(await t.reserve({ subject: "u", address: "a" })).succeeded();
    for (let i = 0; i < 2; i++) await reserved(await t.reserve({ subject: "u", address: "a" })).failed();
    expect((await t.reserve({ subject: "u", address: "a" })).ok).to.equal(true);
  });

  it("a success while other attempts are out: they keep their slots and the lock; one lost long ago does not count", async () => {
    const t = throttle(); // three before the lock
    const [right, ...others] = await Promise.all(
      Array.from({ length: 3 }, () => t.reserve({ subject: "u", address: "a" })),
    ).then((all) => all.map(reserved));
    expect((await t.reserve({ subject: "u", address: "a" })).ok, "locked by the third").to.equal(false);
    await right!.succeeded();
    expect((await t.reserve({ subject: "u", address: "a" })).ok, "two guesses still out").to.equal(false);
    for (const o of others) await o.failed();
    expect((await t.reserve({ subject: "u", address: "a" })).ok).to.equal(false);
    now += 120_000; // past the lock; the failures still count
    const lost = reserved(await t.reserve({ subject: "u", address: "a" })); // its process dies: never settled
    void lost;
    now += 120_000;
    await reserved(await t.reserve({ subject: "u", address: "a" })).succeeded();
    for (let i = 0; i < 2; i++) await reserved(await t.reserve({ subject: "u", address: "a" })).failed();
    expect((await t.reserve({ subject: "u", address: "a" })).ok, "a success reset everything").to.equal(true);
  });

  it("an attempt without a verdict gives its slots back", async () => {
    const t = throttle(3);
    for (let i = 0; i < 10; i++) await reserved(await t.reserve({ subject: "u", address: "a" })).abandoned();
    const last = reserved(await t.reserve({ subject: "u", address: "a" }));
    await last.abandoned();
    await last.failed(); // an outcome counts once
    for (let i = 0; i < 2; i++) await reserved(await t.reserve({ subject: "u", address: "a" })).failed();
    expect((await t.reserve({ subject: "u", address: "a" })).ok).to.equal(true);
  });

  it("the per-address ceiling counts failures of any subject until the hour ends", async () => {
    now = 1_700_000_000_000 - (1_700_000_000_000 % 3_600_000) + 3_000_000; // 10 minutes before the hour
    const t = throttle(3);
    await reserved(await t.reserve({ subject: "x", address: "a" })).succeeded();
    for (const subject of ["p", "q", "r"])
      await reserved(await t.reserve({ subject, address: "a" })).failed();
    expect(await t.reserve({ subject: "s", address: "a" })).to.deep.equal({
      ok: false,
      retryAfterSeconds: 600,
    });
    expect((await t.reserve({ subject: "s", address: "b" })).ok).to.equal(true);
    now += 600_000;
    expect((await t.reserve({ subject: "s", address: "a" })).ok).to.equal(true);
  });

  it("a give-back Redis did not confirm (an outage) is sent again once Redis is back, and counts once", async function () {
    if ((await testStores()).redis.REDIS_MODE !== "single") this.skip(); // a server of its own, stopped and restarted
    this.timeout(30_000);
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-throttle-"));
    const durable = ["--appendonly", "yes", "--appendfsync", "always", "--save", ""];
    let server = await startRedisProcess(dir, durable);
    const client = createRedisClient({
      REDIS_MODE: "single",
      REDIS_URL: `redis://${server.address}/`,
      REDIS_TLS: false,
    });
    client.on("error", () => {});
    try {
      const t = new AttemptThrottle(
        client,
        "outage:",
        { failuresBeforeLockout: 3, baseSeconds: 60, maxSeconds: 60, perAddressPerHour: 100 },
        () => now,
      );
      const inFlight = reserved(await t.reserve({ subject: "u", address: "a" }));
      await server.stop();
      await inFlight.abandoned(); // Redis is away: no error, the give-back waits
      server = await startRedisProcess(dir, durable, "redis-server", undefined, server.port);
      const subjects = () => client.keys("outage:s:*").catch(() => ["(Redis not back yet)"]);
      for (let i = 0; i < 100 && (await subjects()).length > 0; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(await client.keys("outage:s:*"), "the subject's slot came back").to.deep.equal([]);
      const [address] = await client.keys("outage:a:*");
      expect(await client.hget(address!, "n"), "the address slot came back").to.equal("0");
      // Exactly once: three more attempts are verified, the fourth waits.
      for (let i = 0; i < 3; i++) await reserved(await t.reserve({ subject: "u", address: "a" })).failed();
      expect((await t.reserve({ subject: "u", address: "a" })).ok).to.equal(false);
    } finally {
      client.disconnect();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
