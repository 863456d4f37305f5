/**
 * Who may run sandbox work next: each account's share of this process's
 * sandbox (pure logic, with an injected clock; `FairSharePool` applies it to
 * every call).
 *
 * - At most `accountConcurrency` calls of one account run at once, across all
 *   of its projects and versions, and at most `totalConcurrency` of all
 *   accounts together. A call past either waits for a turn.
 * - Turns go round the accounts that wait (one turn each, in turn), so an
 *   account with many waiting calls does not starve one with a few.
 * - Each account may use `accountCpuMs` of isolate CPU time in any window of
 *   `windowMs` (a sliding window, in `SLICES` slices). An account over it is
 *   refused at once (and its waiting calls too), with the time after which it
 *   is under again. So is a call past `accountQueue` waiting calls.
 */
import { present } from "../../../../shared/present.ts";

export interface FairShareLimits {
  /** Calls of one account that run at once. */
  accountConcurrency: number;
  /** Calls of every account together that run at once. */
  totalConcurrency: number;
  /** Isolate CPU time (ms) one account may use per window. */
  accountCpuMs: number;
  windowMs: number;
  /** Calls of one account that may wait for a turn. */
  accountQueue: number;
}

/** An account's call was refused: over its CPU budget, or too many of its calls wait already. */
export class FairShareRefusal extends Error {
  readonly reason: "cpu" | "queue";
  /** When the account may try again. */
  readonly retryAfterMs: number;

  constructor(reason: "cpu" | "queue", retryAfterMs: number) {
    super(
      reason === "cpu"
        ? "The account's sandbox work used its CPU time for now"
        : "Too many of the account's sandbox calls are waiting",
    );
    this.name = "FairShareRefusal";
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
  }
}

/** A call's turn: end it once, with the CPU time the call used. */
export interface Turn {
  end(cpuMs: number): void;
}

/** Slices of the sliding window: CPU time leaves it a slice at a time. */
const SLICES = 10;
/** A call refused because the queue is full may try again after this long. */
const QUEUE_RETRY_MS = 1000;
/** Every so many turns asked for, accounts idle since their CPU time left the window are forgotten. */
const SWEEP_EVERY = 1024;

/** CPU time charged per slice of time, over the last window. */
export class CpuWindow {
  private readonly sliceMs: number;
  /** Slice index → CPU ms, oldest first. */
  private slices: { index: number; ms: number }[] = [];

  constructor(windowMs: number) {
    this.sliceMs = Math.max(1, windowMs / SLICES);
  }

  charge(ms: number, now: number): void {
    this.expire(now);
    const index = Math.floor(now / this.sliceMs);
    const last = this.slices.at(-1);
    if (last?.index === index) last.ms += ms;
    else this.slices.push({ index, ms });
  }

  used(now: number): number {
    this.expire(now);
    return this.slices.reduce((sum, s) => sum + s.ms, 0);
  }

  /** How long until less than `budget` is used (0 when it is already). */
  waitBelow(budget: number, now: number): number {
    let remaining = this.used(now);
    for (const slice of this.slices) {
      if (remaining < budget) break;
      remaining -= slice.ms;
      if (remaining < budget) return Math.max(0, (slice.index + SLICES) * this.sliceMs - now);
    }
    return 0;
  }

  private expire(now: number): void {
    const oldest = Math.floor(now / this.sliceMs) - SLICES + 1;
    const kept = this.slices.findIndex((slice) => slice.index >= oldest);
    this.slices.splice(0, kept === -1 ? this.slices.length : kept);
  }
}

interface Waiter {
  grant(turn: Turn): void;
  refuse(error: Error): void;
}

interface AccountShare {
  running: number;
  waiting: Waiter[];
  cpu: CpuWindow;
  /** The account's CPU budget per window, as its last call said (its plan's, or the default). */
  cpuBudgetMs: number;
}

export class FairShare {
  private readonly limits: FairShareLimits;
  private readonly now: () => number;
  private readonly accounts = new Map<string, AccountShare>();
  /** Accounts with waiting calls, in the order their next turn comes. */
  private round: string[] = [];
  private running = 0;
  private asked = 0;

  constructor(limits: FairShareLimits, now: () => number = Date.now) {
    this.limits = {
      accountConcurrency: Math.max(1, limits.accountConcurrency),
      totalConcurrency: Math.max(1, limits.totalConcurrency),
      accountCpuMs: Math.max(1, limits.accountCpuMs),
      windowMs: Math.max(1, limits.windowMs),
      accountQueue: Math.max(0, limits.accountQueue),
    };
    this.now = now;
  }

  /**
   * Resolves with a turn once `account` may run a call. Rejects at once with
   * FairShareRefusal when the account is over its CPU budget or its queue is
   * full; with `signal`'s reason when it is aborted before the turn comes.
   * `cpuBudgetMs`: the account's own budget per window (its plan's), else `accountCpuMs`.
   */
  turn(account: string, signal?: AbortSignal, cpuBudgetMs?: number): Promise<Turn> {
    if (++this.asked % SWEEP_EVERY === 0) {
      for (const [name, idle] of [...this.accounts]) this.forgetIfIdle(name, idle);
    }
    const share = this.shareOf(account);
    share.cpuBudgetMs = Math.max(1, cpuBudgetMs ?? this.limits.accountCpuMs);
    const refusal = this.overBudget(share);
    if (refusal) return this.refused(account, share, refusal);
    if (share.waiting.length === 0 && this.hasRoom(share)) return Promise.resolve(this.start(account, share));
    if (share.waiting.length >= this.limits.accountQueue) {
      return this.refused(account, share, new FairShareRefusal("queue", QUEUE_RETRY_MS));
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Turn>((resolve, reject) => {
      const onAbort = () => {
        share.waiting = share.waiting.filter((w) => w !== waiter);
        if (share.waiting.length === 0) this.round = this.round.filter((a) => a !== account);
        this.forgetIfIdle(account, share);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: (turn) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(turn);
        },
        refuse: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      share.waiting.push(waiter);
      if (!this.round.includes(account)) this.round.push(account);
    });
  }

  /** Calls running and waiting, and accounts known (for tests and metrics). */
  stats(): { running: number; waiting: number; accounts: number } {
    let waiting = 0;
    for (const share of this.accounts.values()) waiting += share.waiting.length;
    return { running: this.running, waiting, accounts: this.accounts.size };
  }

  /** CPU time (ms) `account` used in the window up to now. */
  cpuUsed(account: string): number {
    return this.accounts.get(account)?.cpu.used(this.now()) ?? 0;
  }

  private shareOf(account: string): AccountShare {
    let share = this.accounts.get(account);
    if (!share) {
      share = {
        running: 0,
        waiting: [],
        cpu: new CpuWindow(this.limits.windowMs),
        cpuBudgetMs: this.limits.accountCpuMs,
      };
      this.accounts.set(account, share);
    }
    return share;
  }

  private overBudget(share: AccountShare): FairShareRefusal | undefined {
    const wait = share.cpu.waitBelow(share.cpuBudgetMs, this.now());
    return wait > 0 ? new FairShareRefusal("cpu", wait) : undefined;
  }

  private refused(account: string, share: AccountShare, refusal: FairShareRefusal): Promise<never> {
    this.forgetIfIdle(account, share);
    return Promise.reject(refusal);
  }

  private hasRoom(share: AccountShare): boolean {
    return share.running < this.limits.accountConcurrency && this.running < this.limits.totalConcurrency;
  }

  private start(account: string, share: AccountShare): Turn {
    share.running++;
    this.running++;
    let ended = false;
    return {
      end: (cpuMs) => {
        if (ended) return;
        ended = true;
        share.running--;
        this.running--;
        if (Number.isFinite(cpuMs) && cpuMs > 0) share.cpu.charge(cpuMs, this.now());
        this.next();
        this.forgetIfIdle(account, share);
      },
    };
  }

  /** Gives free turns to waiting calls, one account after the other. */
  private next(): void {
    let skipped = 0;
    while (this.running < this.limits.totalConcurrency && skipped < this.round.length) {
      const account = this.round.shift();
      if (account === undefined) break;
      const share = present(this.accounts.get(account), "the share of an account in the round");
      const refusal = this.overBudget(share);
      if (refusal) {
        const waiting = share.waiting;
        share.waiting = [];
        for (const w of waiting) w.refuse(refusal);
        this.forgetIfIdle(account, share);
        continue;
      }
      if (share.running >= this.limits.accountConcurrency) {
        this.round.push(account);
        skipped++;
        continue;
      }
      // In the round only while it has a waiting call (see the abort and the refusal above).
      const waiter = share.waiting.shift();
      if (!waiter) continue;
      skipped = 0;
      waiter.grant(this.start(account, share));
      if (share.waiting.length > 0) this.round.push(account);
    }
  }

  /** An account with nothing running, waiting or charged is forgotten (memory stays bounded). */
  private forgetIfIdle(account: string, share: AccountShare): void {
    if (share.running === 0 && share.waiting.length === 0 && share.cpu.used(this.now()) === 0) {
      this.accounts.delete(account);
    }
  }
}
