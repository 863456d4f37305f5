/**
 * Brute-force defence for any kind of credential check (OWASP): an attempt is
 * reserved before the credential is verified, atomically (Lua scripts), so
 * parallel attempts cannot overtake the count.
 *
 * Two budgets are reserved, one after the other:
 * - per subject (what is being guessed at, e.g. one user of one project): every
 *   reservation takes a slot; from the N-th slot on the subject is locked for
 *   base × 2^(slots − N) seconds (up to a cap) at once, before the verdict, so
 *   at most N attempts are ever verified before the first lock, and one per lock
 *   period after it. A success resets the subject (attempts still out for their
 *   verdict keep their slots and the lock); a failure keeps its slot and renews
 *   the lock from the moment of the failure.
 * - per client address and hour: a ceiling of failures; a success gives its slot back.
 *
 * An attempt that got no verdict at all (the verifier was unreachable) gives
 * both slots back. Attempts still in flight when a process dies keep theirs:
 * they count as failures.
 *
 * Each reservation carries an id (a field of both keys): reserving twice under
 * one id (a command the client sent again after a lost connection) takes one
 * slot, and settling twice gives back at most once. A settlement Redis did not
 * take (a restart, a failover) is kept and sent again before this process
 * reserves its next attempt on the same subject, and in the background, instead
 * of leaving the slot taken, which would lock users out after the outage. A
 * reservation whose answer was lost is given back the same way.
 */
import { createHash, randomBytes } from "node:crypto";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { throttleAddressKey, throttleSubjectKey } from "../../../../shared/redis/key-layout.ts";
import { defineScript, type Script } from "../../../../shared/redis/scripts.ts";
import { PendingSettlements, type Settlement } from "./pending-settlements.ts";

export interface ThrottleSettings {
  failuresBeforeLockout: number;
  baseSeconds: number;
  maxSeconds: number;
  perAddressPerHour: number;
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
  /** No verdict was reached (e.g. the verifier was unavailable): both slots go back. */
  abandoned(): Promise<void>;
}

export type ReserveResult = { ok: true; reservation: Reservation } | { ok: false; retryAfterSeconds: number };

const HOUR_MS = 3_600_000;

/** Lock length in ms for the `slots`-th slot, or 0 below the threshold. ARGV: threshold, base s, max s. */
const LOCK_FOR = `
local function lockFor(slots, threshold, base, max)
  if slots < threshold then return 0 end
  local wait = base * (2 ^ math.min(slots - threshold, 62))
  if wait > max then wait = max end
  return math.floor(wait * 1000)
end`;

// The two budgets live in different hash slots (shared/redis/key-layout.ts), so each has its own
// scripts: the address slot is reserved first, then the subject's; a refused subject gives the
// address slot back. Each reservation is atomic on its own, which is what bounds the guesses.

// KEYS: address hash { n: attempts, r:<id>: reservations not given back }. ARGV: ceiling, hour ms
// left, reservation id. 1 when reserved (or already reserved under this id), 0 at the ceiling.
const RESERVE_ADDRESS = `
if redis.call('HEXISTS', KEYS[1], 'r:' .. ARGV[3]) == 1 then return 1 end
if tonumber(redis.call('HGET', KEYS[1], 'n') or '0') >= tonumber(ARGV[1]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('HSET', KEYS[1], 'r:' .. ARGV[3], 1)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1`;

// KEYS: subject hash { slots, until, r:<id> }. ARGV: now ms, threshold, base s, max s, reservation id.
// {0, wait ms} when refused, {1, 0} when reserved (or already reserved under this id).
const RESERVE_SUBJECT = `${LOCK_FOR}
if redis.call('HEXISTS', KEYS[1], 'r:' .. ARGV[5]) == 1 then return {1, 0} end
local now, threshold, base, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local lockedUntil = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if lockedUntil > now then return {0, lockedUntil - now} end
local slots = redis.call('HINCRBY', KEYS[1], 'slots', 1)
local lock = lockFor(slots, threshold, base, max)
if lock > 0 then redis.call('HSET', KEYS[1], 'until', now + lock) end
redis.call('HSET', KEYS[1], 'r:' .. ARGV[5], now)
redis.call('EXPIRE', KEYS[1], max + 3600)
return {1, 0}`;

// A failure keeps both slots; the lock (if any) runs from now. KEYS: subject. ARGV: now, threshold,
// base, max, reservation id, "again" when sent again (then it does nothing once its reservation is
// gone: it was applied).
const FAILED = `${LOCK_FOR}
local now, threshold, base, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if redis.call('HDEL', KEYS[1], 'r:' .. ARGV[5]) == 0 and ARGV[6] == 'again' then return 0 end
local slots = tonumber(redis.call('HGET', KEYS[1], 'slots') or '0')
local lock = lockFor(slots, threshold, base, max)
if lock > 0 then
  local lockedUntil = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
  if now + lock > lockedUntil then redis.call('HSET', KEYS[1], 'until', now + lock) end
end
return slots`;

// Ends a subject reservation without a failure. KEYS: subject. ARGV: mode, threshold, reservation id,
// now ms, in-flight ms, "again" when sent again. "reset" (a success) clears the subject, but while
// other attempts reserved in the last in-flight ms are still out they keep their slots and the lock:
// a success racing with parallel guesses must not let more of them through. Sent again, a reset
// happens only if its reservation is still there (else it was applied, and failures since stay).
// "release" (no verdict) gives its slot back, once.
const GIVE_BACK_SUBJECT = `
if ARGV[1] == 'reset' then
  if redis.call('HDEL', KEYS[1], 'r:' .. ARGV[3]) == 0 and ARGV[6] == 'again' then return 0 end
  local out, since = 0, tonumber(ARGV[4]) - tonumber(ARGV[5])
  local fields = redis.call('HGETALL', KEYS[1])
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 2) == 'r:' and tonumber(fields[i + 1]) > since then out = out + 1 end
  end
  if out == 0 then redis.call('DEL', KEYS[1]) else redis.call('HSET', KEYS[1], 'slots', out) end
elseif redis.call('HDEL', KEYS[1], 'r:' .. ARGV[3]) == 1 then
  local slots = redis.call('HINCRBY', KEYS[1], 'slots', -1)
  if slots <= 0 then redis.call('DEL', KEYS[1])
  elseif slots < tonumber(ARGV[2]) then redis.call('HDEL', KEYS[1], 'until') end
end
return 1`;

// KEYS: address hash. ARGV: reservation id. Gives the address slot back, once.
const GIVE_BACK_ADDRESS = `
if redis.call('HDEL', KEYS[1], 'r:' .. ARGV[1]) == 1 then redis.call('HINCRBY', KEYS[1], 'n', -1) end
return 1`;

/** How long an attempt may be out for its verdict (a reservation older than this is one its process lost). */
const IN_FLIGHT_MS = 60_000;

type ThrottleScripts = Record<
  "reserveAddress" | "reserveSubject" | "failed" | "giveBackSubject" | "giveBackAddress",
  Script
>;

export class AttemptThrottle {
  readonly #scripts: ThrottleScripts;
  readonly #keyPrefix: string;
  readonly #settings: ThrottleSettings;
  readonly #now: () => number;
  readonly #pending = new PendingSettlements();

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
   * Refused with the seconds to wait, or reserved (two round trips; three when the subject is
   * locked). The subject's settlements still waiting for Redis are sent first; rejects while
   * Redis is away.
   */
  async reserve(scope: AttemptScope): Promise<ReserveResult> {
    const s = this.#settings;
    const subjectHash = createHash("sha256").update(scope.subject).digest("hex").slice(0, 40);
    const subjectKey = throttleSubjectKey(this.#keyPrefix, subjectHash);
    await this.#pending.flush(subjectKey);
    const now = this.#now();
    const id = randomBytes(8).toString("hex");
    const addressKey = throttleAddressKey(this.#keyPrefix, scope.address, Math.floor(now / HOUR_MS));
    const hourLeftMs = HOUR_MS - (now % HOUR_MS);
    const giveAddressBack = () => this.#scripts.giveBackAddress(1, addressKey, id);
    let subject: [number, number];
    try {
      if ((await this.#scripts.reserveAddress(1, addressKey, s.perAddressPerHour, hourLeftMs, id)) !== 1)
        return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(hourLeftMs / 1000)) };
      subject = (await this.#scripts.reserveSubject(
        1,
        subjectKey,
        now,
        s.failuresBeforeLockout,
        s.baseSeconds,
        s.maxSeconds,
        id,
      )) as [number, number];
    } catch (err) {
      // Redis may have reserved and lost only the answer: whatever this id holds goes back.
      this.#pending.keep(this.#giveBack(id, subjectKey, "release", giveAddressBack));
      throw err;
    }
    const [reserved, waitMs] = subject;
    if (reserved !== 1) {
      await this.#pending.settle({ key: subjectKey, send: giveAddressBack });
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    return { ok: true, reservation: this.#reservation(id, subjectKey, giveAddressBack) };
  }

  #reservation(id: string, subjectKey: string, giveAddressBack: () => Promise<unknown>): Reservation {
    const s = this.#settings;
    let settled = false;
    const once = async (settlement: Settlement) => {
      if (settled) return;
      settled = true;
      await this.#pending.settle(settlement);
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

  /** Gives the subject's slot back ("reset" after a success), then the address slot. */
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
          this.#settings.failuresBeforeLockout,
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
