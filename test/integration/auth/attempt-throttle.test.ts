/**
 * The attempt throttle on real Redis, with a clock the test moves: reservations
 * before verification, attempts beyond the free places waiting for verdicts, what
 * each outcome gives back, the exponential lock and the per-address ceiling;
 * settlements across a Redis outage and answers lost on the way. Generic over
 * what is throttled: subjects are opaque.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { AttemptThrottle, type ReserveResult } from "../../../services/auth/src/store/attempt-throttle.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { createRedisClient } from "../../../shared/redis/clients.ts";
import { throttleSubjectKey } from "../../../shared/redis/key-layout.ts";
import { startRedisProcess } from "../../support/redis-topologies.ts";
import { isolationPrefix, testRedisClient, testStores } from "../../support/stores.ts";
import { TcpRelay } from "../../support/tcp-relay.ts";

describe("attempt throttle", () => {
  let redis: RedisClient;
  let now = 1_700_000_000_000;
  /** Waiting attempts wait for verdicts, not for the clock: the wait is long enough never to end in a test. */
  const throttle = (perAddressPerHour = 1000, queueWaitMs = 600_000) =>
    new AttemptThrottle(
      redis,
      `tessera-test:${isolationPrefix()}throttle:`,
      { failuresBeforeLockout: 3, baseSeconds: 2, maxSeconds: 8, perAddressPerHour, queueWaitMs },
      () => now,
    );
  const reserved = (r: ReserveResult) => {
    if (!r.ok) throw new Error(`refused (${r.reason}) for ${r.retryAfterSeconds} s`);
    return r.reservation;
  };
  /** The first `n` of `attempts` to be answered, in the order they were. */
  const firstAnswered = (attempts: Promise<ReserveResult>[], n: number) =>
    new Promise<ReserveResult[]>((resolve, reject) => {
      const answered: ReserveResult[] = [];
      for (const attempt of attempts)
        attempt.then((r) => {
          answered.push(r);
          if (answered.length === n) resolve([...answered]);
        }, reject);
    });

  before(async () => {
    redis = await testRedisClient();
  });
  after(() => redis.disconnect());

  it("reserves at most N attempts in parallel; the others wait, and are refused once those N have failed (50 runs)", async () => {
    const t = throttle();
    for (let run = 0; run < 50; run++) {
      const attempts = Array.from({ length: 20 }, () => t.reserve({ subject: `u${run}`, address: "a" }));
      const first = await firstAnswered(attempts, 3);
      for (const r of first) await reserved(r).failed();
      const results = await Promise.all(attempts);
      expect(
        results.filter((r) => r.ok),
        "only the first three were reserved",
      ).to.have.length(3);
      for (const r of results.filter((r) => !r.ok))
        expect(r).to.deep.equal({ ok: false, reason: "locked", retryAfterSeconds: 2 });
    }
  });

  it("an attempt waiting for a place gets the one a success frees (a right answer is never refused for others in flight)", async () => {
    const t = throttle();
    const scope = { subject: "u", address: "a" };
    const attempts = Array.from({ length: 10 }, () => t.reserve(scope));
    // Every attempt succeeds as soon as it is reserved: all ten are reserved in turn.
    const results = await Promise.all(
      attempts.map(async (a) => {
        const r = await a;
        await reserved(r).succeeded();
        return r.ok;
      }),
    );
    expect(results).to.deep.equal(Array(10).fill(true));
  });

  it("a success among attempts in flight frees one place: the failures after it are bounded by N again", async () => {
    const t = throttle();
    const scope = { subject: "u", address: "a" };
    const attempts = Array.from({ length: 8 }, () => t.reserve(scope));
    const [right, ...wrong] = (await firstAnswered(attempts, 3)).map(reserved);
    await right!.succeeded(); // one waiting attempt takes its place
    const [next] = (await firstAnswered(attempts, 4)).slice(3).map(reserved);
    for (const w of [...wrong, next!]) await w.failed();
    const results = await Promise.all(attempts);
    expect(
      results.filter((r) => r.ok),
      "three, then one more after the success",
    ).to.have.length(4);
    for (const r of results.filter((r) => !r.ok)) expect(r).to.deep.include({ ok: false, reason: "locked" });
  });

  it("an attempt whose subject stays in flight for the whole wait is refused as busy, and nothing is counted", async () => {
    const t = throttle(1000, 0);
    const scope = { subject: "u", address: "a" };
    const out = (await Promise.all([t.reserve(scope), t.reserve(scope), t.reserve(scope)])).map(reserved);
    expect(await t.reserve(scope)).to.deep.equal({ ok: false, reason: "busy", retryAfterSeconds: 1 });
    for (const o of out) await o.succeeded();
    for (let i = 0; i < 2; i++) await reserved(await t.reserve(scope)).failed();
    expect((await t.reserve(scope)).ok, "the busy answer was no failure").to.equal(true);
  });

  it("a failure keeps its slot and renews the lock from its own time; the lock doubles up to the cap", async () => {
    const t = throttle();
    const scope = { subject: "u", address: "a" };
    for (let i = 0; i < 3; i++) await reserved(await t.reserve(scope)).failed();
    expect(await t.reserve(scope)).to.deep.equal({ ok: false, reason: "locked", retryAfterSeconds: 2 });
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

  it("a reservation its process never settled holds its place, and counts as a failure once older than the in-flight limit", async () => {
    const t = throttle(1000, 0);
    const scope = { subject: "u", address: "a" };
    for (let i = 0; i < 2; i++) await reserved(await t.reserve(scope)).failed();
    const lost = reserved(await t.reserve(scope)); // its process dies: never settled
    void lost;
    expect(await t.reserve(scope), "its place is held").to.deep.include({ reason: "busy" });
    now += 120_000;
    expect(await t.reserve(scope), "the third failure").to.deep.equal({
      ok: false,
      reason: "locked",
      retryAfterSeconds: 2,
    });
    now += 10_000;
    await reserved(await t.reserve(scope)).succeeded();
    for (let i = 0; i < 2; i++) await reserved(await t.reserve(scope)).failed();
    expect((await t.reserve(scope)).ok, "a success reset everything").to.equal(true);
  });

  it("a subject counted by the previous release (slots: failures and attempts in flight together) keeps its count", async () => {
    const prefix = `tessera-test:${isolationPrefix()}throttle:`;
    const t = new AttemptThrottle(
      redis,
      prefix,
      { failuresBeforeLockout: 3, baseSeconds: 2, maxSeconds: 8, perAddressPerHour: 1000, queueWaitMs: 0 },
      () => now,
    );
    const subjectHash = createHash("sha256").update("old").digest("hex").slice(0, 40);
    await redis.hset(throttleSubjectKey(prefix, subjectHash), "slots", 3);
    expect(await t.reserve({ subject: "old", address: "a" })).to.deep.equal({
      ok: false,
      reason: "locked",
      retryAfterSeconds: 2,
    });
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
      reason: "locked",
      retryAfterSeconds: 600,
    });
    expect((await t.reserve({ subject: "s", address: "b" })).ok).to.equal(true);
    now += 600_000;
    expect((await t.reserve({ subject: "s", address: "a" })).ok).to.equal(true);
  });

  it("settlements Redis did not take (an outage) are sent before the next attempt is reserved, and count once", async function () {
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
        { failuresBeforeLockout: 3, baseSeconds: 60, maxSeconds: 60, perAddressPerHour: 100, queueWaitMs: 0 },
        () => now,
      );
      const scope = { subject: "u", address: "a" };
      const inFlight = await Promise.all([t.reserve(scope), t.reserve(scope)]).then((r) => r.map(reserved));
      await server.stop();
      await inFlight[0]!.succeeded(); // Redis is away: no error, the settlements wait
      await inFlight[1]!.abandoned();
      server = await startRedisProcess(dir, durable, "redis-server", undefined, server.port);
      // At once, no waiting for a retry: both slots are back before these are reserved.
      const next = await Promise.all([t.reserve(scope), t.reserve(scope), t.reserve(scope)]);
      expect(next.map((r) => r.ok)).to.deep.equal([true, true, true]);
      const [address] = await client.keys("outage:a:*");
      expect(await client.hget(address!, "n"), "address slots: the three out now").to.equal("3");
      // Exactly once: those three hold every place of the subject.
      expect(await t.reserve(scope)).to.deep.include({ ok: false, reason: "busy" });
    } finally {
      client.disconnect();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a reservation whose answer was lost takes one slot when sent again, and goes back when the client gave up on it", async function () {
    const stores = await testStores();
    if (stores.redis.REDIS_MODE !== "single") this.skip(); // a relay in front of one server
    const relay = new TcpRelay(Number(new URL(stores.redis.REDIS_URL).port));
    const client = createRedisClient({
      REDIS_MODE: "single",
      REDIS_URL: `redis://127.0.0.1:${await relay.listen()}/`,
      REDIS_TLS: false,
    });
    client.on("error", () => {});
    const prefix = `tessera-test:${isolationPrefix()}lost:`;
    try {
      const t = new AttemptThrottle(
        client,
        prefix,
        { failuresBeforeLockout: 3, baseSeconds: 60, maxSeconds: 60, perAddressPerHour: 100, queueWaitMs: 0 },
        () => now,
      );
      const scope = { subject: "u", address: "a" };
      await reserved(await t.reserve({ subject: "warm-up", address: "b" })).abandoned(); // scripts loaded
      const subjectKeys = () => client.keys(`${prefix}s:*`);

      // The subject's answer (the first of a reservation) is lost; the client reconnects at once
      // and sends the command again.
      const lost = relay.loseAnswer(1, 0);
      const resent = reserved(await t.reserve(scope));
      await lost;
      const [subjectKey] = await subjectKeys();
      const fields = Object.keys(await client.hgetall(subjectKey!));
      expect(
        fields.filter((f) => f.startsWith("r:")),
        "one place for one attempt",
      ).to.have.length(1);
      await resent.abandoned();
      expect(await subjectKeys(), "given back whole").to.deep.equal([]);

      // Lost again, and the relay refuses the client until it gives up: the attempt fails…
      const lostForGood = relay.loseAnswer(1, 2500);
      let failure: unknown;
      await t.reserve(scope).catch((err: unknown) => {
        failure = err;
      });
      await lostForGood;
      expect(failure, "the attempt failed").to.be.instanceOf(Error);
      const reachable = () => client.ping().then(Boolean, () => false);
      while (!(await reachable())) await new Promise((r) => setTimeout(r, 50)); // until the relay lets clients in
      // …and its slot, which Redis did reserve, is back before the next attempts are reserved.
      const next = await Promise.all([t.reserve(scope), t.reserve(scope), t.reserve(scope)]);
      expect(next.map((r) => r.ok)).to.deep.equal([true, true, true]);
    } finally {
      client.disconnect();
      await relay.close();
    }
  });
});
