/**
 * Brute-force defence for any kind of credential check (OWASP): an attempt is
 * reserved before the credential is verified, atomically (Lua scripts), so
 * parallel attempts cannot overtake the count.
 *
 * Two budgets are reserved, one after the other (the subject's first, so an attempt that is
 * locked out or has to wait takes nothing of its address's budget):
 * - per subject (what is being guessed at, e.g. one user of one project): the
 *   subject keeps its failures since its last success (f) and its attempts in
 *   flight (out). Only failures count toward the lock: from the N-th failure on
 *   the subject is locked for base × 2^(f − N) seconds (up to a cap) from the
 *   moment of that failure. An attempt is reserved only while
 *   out < max(N − f, 1); beyond that it is neither verified nor refused: it WAITS
 *   (up to `queueWaitMs`) for attempts in flight to be answered, and tries again.
 *   So f + out never exceeds N below the lock: at most N wrong guesses are ever
 *   verified before the first lock, however many arrive in parallel (the ones
 *   waiting are refused once those N have failed), and one per lock period after
 *   it (max(N − f, 1) = 1). Right answers are never refused for other attempts
 *   being in flight: they wait for a free place, which every verdict makes (a
 *   success resets f to 0 and frees its own place; a failure frees its place but
 *   counts). A success resets the subject's failures and lock; attempts still in
 *   flight keep their places (they count as failures if they fail). A wait that
 *   runs out (verdicts that take longer than the wait) is answered as such
 *   (`busy`), not as a lock-out, and counts nothing.
 * - per client address and hour: a ceiling of failures (attempts in flight count until their
 *   verdict); a success or an attempt without a verdict gives its slot back.
 *
 * An attempt that got no verdict at all (the verifier was unreachable) gives
 * both places back. Attempts still in flight when a process dies keep theirs for
 * IN_FLIGHT_MS and then count as failures (they may have been verified).
 *
 * Each reservation carries an id (a field of both keys): reserving twice under
 * one id (a command the client sent again after a lost connection) takes one
 * place, and settling twice counts at most once. A settlement Redis did not take
 * (a restart, a failover) is kept and sent again before this process reserves
 * its next attempt on the same subject, and in the background; until then the
 * attempt stays in flight in Redis, so it still holds its place. A reservation
 * whose answer was lost is given back the same way.
 */
import { createHash } from "node:crypto";
import { randomHex } from "../../../../shared/random-hex.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { throttleAddressKey, throttleSubjectKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";
import { PendingSettlements, type Settlement } from "./pending-settlements.ts";
import { SettledSignal } from "./settled-signal.ts";

export interface ThrottleSettings {
  failuresBeforeLockout: number;
  baseSeconds: number;
  maxSeconds: number;
  perAddressPerHour: number;
  /** How long an attempt waits for a place while the subject's places are all in flight. */
  queueWaitMs: number;
}

/** What one attempt is counted against. */
export interface AttemptScope {
  /** Opaque name of what is being guessed at; only a hash of it is stored. */
  subject: string;
  /** The client's address (from a trusted proxy, or the socket). */
  address: string;
}

/** A reserved attempt: tell it how the verification ended, once. */
export interface Reservation {
  succeeded(): Promise<void>;
  failed(): Promise<void>;
  /** No verdict was reached (e.g. the verifier was unavailable): both places go back. */
  abandoned(): Promise<void>;
}

/**
 * Refused either because of failures (`locked`: the subject's lock, or the address's ceiling)
 * or because the subject's other attempts stayed in flight for the whole wait (`busy`).
 */
export type ReserveResult =
  | { ok: true; reservation: Reservation }
  | { ok: false; reason: "locked" | "busy"; retryAfterSeconds: number };

const HOUR_MS = 3_600_000;

/** How long an attempt may be out for its verdict (a reservation older than this is one its process lost). */
const IN_FLIGHT_MS = 60_000;

/** Between two tries of a waiting attempt (a verdict in this process wakes it at once; other processes' are polled). */
const pollMs = (round: number) => Math.min(25 * 2 ** round, 250);

// The subject hash: { f: failures since the last success, until: lock end (ms), r:<id>: reservation
// time (ms) of each attempt in flight }. `slots` is the counter of the release before this one
// (failures and attempts in flight together): found, it is counted as failures, once.
const SUBJECT_STATE = `
local function lockFor(failures, threshold, base, max)
  if failures < threshold then return 0 end
  local wait = base * (2 ^ math.min(failures - threshold, 62))
  if wait > max then wait = max end
  return math.floor(wait * 1000)
end
local function addFailures(key, n, now, threshold, base, max)
  local failures = redis.call('HINCRBY', key, 'f', n)
  local lock = lockFor(failures, threshold, base, max)
  if lock > 0 and now + lock > tonumber(redis.call('HGET', key, 'until') or '0') then
    redis.call('HSET', key, 'until', now + lock)
  end
  redis.call('EXPIRE', key, max + 3600)
  return failures
end
-- Attempts in flight; those reserved before now - staleMs (their process is gone) become failures.
local function inFlight(key, now, staleMs, threshold, base, max)
  local out, lost = 0, 0
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 'r:' then
      if tonumber(fields[i + 1]) > now - staleMs then out = out + 1
      else redis.call('HDEL', key, fields[i]); lost = lost + 1 end
    elseif fields[i] == 'slots' then
      redis.call('HDEL', key, 'slots'); lost = lost + tonumber(fields[i + 1])
    end
  end
  if lost > 0 then addFailures(key, lost, now, threshold, base, max) end
  return out
end`;

// KEYS: subject. ARGV: now ms, threshold, base s, max s, reservation id, in-flight ms.
// {1, 0} reserved (or already reserved under this id), {0, wait ms} locked, {2, 0} every place in flight.
const RESERVE_SUBJECT = `${SUBJECT_STATE}
if redis.call('HEXISTS', KEYS[1], 'r:' .. ARGV[5]) == 1 then return {1, 0} end
local now, threshold, base, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local out = inFlight(KEYS[1], now, tonumber(ARGV[6]), threshold, base, max)
local lockedUntil = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if lockedUntil > now then return {0, lockedUntil - now} end
local failures = tonumber(redis.call('HGET', KEYS[1], 'f') or '0')
if out >= math.max(threshold - failures, 1) then return {2, 0} end
redis.call('HSET', KEYS[1], 'r:' .. ARGV[5], now)
redis.call('EXPIRE', KEYS[1], max + 3600)
return {1, 0}`;

// A failure frees its place and counts; the lock (if any) runs from now. KEYS: subject. ARGV: now,
// threshold, base, max, reservation id, "again" when sent again (then it does nothing once its
// reservation is gone: it was applied).
const FAILED = `${SUBJECT_STATE}
if redis.call('HDEL', KEYS[1], 'r:' .. ARGV[5]) == 0 and ARGV[6] == 'again' then return 0 end
return addFailures(KEYS[1], 1, tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]))`;

// Ends a subject reservation without a failure. KEYS: subject. ARGV: mode, reservation id, now ms,
// in-flight ms, "again" when sent again. Both free the attempt's place, once. "reset" (a success)
// also clears the failures and the lock, and reservations older than the in-flight ms (their
// process is gone: failures before this success); attempts still in flight keep their places. Sent
// again, a reset happens only if its reservation is still there (else it was applied, and failures
// since stay). "release" (no verdict) does nothing more.
const GIVE_BACK_SUBJECT = `
if redis.call('HDEL', KEYS[1], 'r:' .. ARGV[2]) == 0 and ARGV[5] == 'again' then return 0 end
if ARGV[1] == 'reset' then
  redis.call('HDEL', KEYS[1], 'f', 'until', 'slots')
  local since = tonumber(ARGV[3]) - tonumber(ARGV[4])
  local fields = redis.call('HGETALL', KEYS[1])
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 'r:' and tonumber(fields[i + 1]) <= since then
      redis.call('HDEL', KEYS[1], fields[i])
    end
  end
end
return 1`;

// KEYS: address hash { n: attempts, r:<id>: reservations not given back }. ARGV: ceiling, hour ms
// left, reservation id. 1 when reserved (or already reserved under this id), 0 at the ceiling.
const RESERVE_ADDRESS = `
if redis.call('HEXISTS', KEYS[1], 'r:' .. ARGV[3]) == 1 then return 1 end
if tonumber(redis.call('HGET', KEYS[1], 'n') or '0') >= tonumber(ARGV[1]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('HSET', KEYS[1], 'r:' .. ARGV[3], 1)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1`;

// KEYS: address hash. ARGV: reservation id. Gives the address slot back, once.
const GIVE_BACK_ADDRESS = `
if redis.call('HDEL', KEYS[1], 'r:' .. ARGV[1]) == 1 then redis.call('HINCRBY', KEYS[1], 'n', -1) end
return 1`;

type ThrottleScripts = Record<
  "reserveAddress" | "reserveSubject" | "failed" | "giveBackSubject" | "giveBackAddress",
  Script
>;

type Refusal = Extract<ReserveResult, { ok: false }>;

export class AttemptThrottle {
  readonly #scripts: ThrottleScripts;
  readonly #keyPrefix: string;
  readonly #settings: ThrottleSettings;
  readonly #now: () => number;
  readonly #pending = new PendingSettlements();
  readonly #settled = new SettledSignal();

  /** `keyPrefix` names this throttle in Redis (e.g. `tessera:throttle:login:`); each kind of check has its own. */
  constructor(
    redis: RedisClient,
    keyPrefix: string,
    settings: ThrottleSettings,
    now: () => number = Date.now,
  ) {
    this.#scripts = {
      reserveAddress: defineScript(redis, "throttleReserveAddress", RESERVE_ADDRESS),
      reserveSubject: defineScript(redis, "throttleReserveSubject", RESERVE_SUBJECT),
      failed: defineScript(redis, "throttleFailed", FAILED),
      giveBackSubject: defineScript(redis, "throttleGiveBackSubject", GIVE_BACK_SUBJECT),
      giveBackAddress: defineScript(redis, "throttleGiveBackAddress", GIVE_BACK_ADDRESS),
    };
    this.#keyPrefix = keyPrefix;
    this.#settings = settings;
    this.#now = now;
  }

  /**
   * Reserved, or refused with the seconds to wait. While every place of the subject is in flight
   * the attempt waits for a verdict (up to `queueWaitMs`) and tries again. Each try sends the
   * subject's settlements still waiting for Redis first; rejects while Redis is away.
   */
  async reserve(scope: AttemptScope): Promise<ReserveResult> {
    const subjectHash = createHash("sha256").update(scope.subject).digest("hex").slice(0, 40);
    const subjectKey = throttleSubjectKey(this.#keyPrefix, subjectHash);
    const deadline = performance.now() + this.#settings.queueWaitMs;
    for (let round = 0; ; round++) {
      await this.#pending.flush(subjectKey);
      const result = await this.#tryReserve(subjectKey, scope.address);
      if (result !== "busy") return result;
      const left = deadline - performance.now();
      if (left <= 0) return { ok: false, reason: "busy", retryAfterSeconds: 1 };
      await this.#settled.next(subjectKey, Math.min(left, pollMs(round)));
    }
  }

  /** The subject's place first (nothing else is taken while it is locked or busy), then the address's. */
  async #tryReserve(subjectKey: string, address: string): Promise<ReserveResult | "busy"> {
    const s = this.#settings;
    const now = this.#now();
    const id = randomHex(8);
    const addressKey = throttleAddressKey(this.#keyPrefix, address, Math.floor(now / HOUR_MS));
    const hourLeftMs = HOUR_MS - (now % HOUR_MS);
    const giveAddressBack = () => this.#scripts.giveBackAddress(1, addressKey, id);
    let reservedAddress: unknown;
    try {
      const [reserved, waitMs] = (await this.#scripts.reserveSubject(
        1,
        subjectKey,
        now,
        s.failuresBeforeLockout,
        s.baseSeconds,
        s.maxSeconds,
        id,
        IN_FLIGHT_MS,
      )) as [number, number];
      if (reserved === 0) return locked(waitMs);
      if (reserved === 2) return "busy";
      reservedAddress = await this.#scripts.reserveAddress(
        1,
        addressKey,
        s.perAddressPerHour,
        hourLeftMs,
        id,
      );
    } catch (err) {
      // Redis may have reserved and lost only the answer: whatever this id holds goes back.
      this.#pending.keep(this.#giveBack(id, subjectKey, "release", giveAddressBack));
      throw err;
    }
    if (reservedAddress !== 1) {
      await this.#settle(this.#giveBack(id, subjectKey, "release", async () => {}));
      return locked(hourLeftMs);
    }
    return { ok: true, reservation: this.#reservation(id, subjectKey, giveAddressBack) };
  }

  /** Sends (or keeps) a settlement, then wakes the attempts of its subject waiting in this process. */
  async #settle(settlement: Settlement): Promise<void> {
    await this.#pending.settle(settlement);
    this.#settled.notify(settlement.key);
  }

  #reservation(id: string, subjectKey: string, giveAddressBack: () => Promise<unknown>): Reservation {
    const s = this.#settings;
    let settled = false;
    const once = async (settlement: Settlement) => {
      if (settled) return;
      settled = true;
      await this.#settle(settlement);
    };
    return {
      succeeded: () => once(this.#giveBack(id, subjectKey, "reset", giveAddressBack)),
      failed: () =>
        once({
          key: subjectKey,
          send: (again) =>
            this.#scripts.failed(
              1,
              subjectKey,
              this.#now(),
              s.failuresBeforeLockout,
              s.baseSeconds,
              s.maxSeconds,
              id,
              again ? "again" : "first",
            ),
        }),
      abandoned: () => once(this.#giveBack(id, subjectKey, "release", giveAddressBack)),
    };
  }

  /** Frees the subject's place ("reset" after a success), then gives the address slot back. */
  #giveBack(
    id: string,
    subjectKey: string,
    mode: "reset" | "release",
    giveAddressBack: () => Promise<unknown>,
  ): Settlement {
    return {
      key: subjectKey,
      send: async (again) => {
        await this.#scripts.giveBackSubject(
          1,
          subjectKey,
          mode,
          id,
          this.#now(),
          IN_FLIGHT_MS,
          again ? "again" : "first",
        );
        await giveAddressBack();
      },
    };
  }
}

function locked(waitMs: number): Refusal {
  return { ok: false, reason: "locked", retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}
