/**
 * A sandbox pool whose calls are admitted by each account's fair share
 * (fair-share.ts): every call of a program waits for its account's turn
 * (within the call's own time limit), and the CPU time it spent in its isolate
 * is charged to the account. An account over its CPU budget, or with too many
 * calls waiting, is refused with 429 and `Retry-After` (`errors.sandboxShareUsed`).
 * Custom providers, rules, JavaScript resources and events all go through it
 * (service.ts); the pool underneath runs the calls.
 */
import { errors } from "../../../../shared/errors.ts";
import { SandboxError, SandboxTimeoutError } from "./errors.ts";
import { type FairShare, FairShareRefusal, type Turn } from "./fair-share.ts";
import type {
  CallOptions,
  EvaluateOptions,
  ProgramOptions,
  ProgramSource,
  SandboxPool,
  SandboxProgram,
  SandboxStats,
} from "./types.ts";

/**
 * What a call that lost its isolate (memory limit, crash) is charged at least: the service
 * builds a new isolate for the program, or starts a new sandbox process (about 0.2 s of a core).
 */
export const LOST_ISOLATE_CHARGE_MS = 250;

export interface FairSharePoolOptions {
  /** Default wall-clock limit of a call (the pool underneath's `timeoutMs`). */
  timeoutMs: number;
  /** Told each refusal (429), and why: `cpu` (budget used) or `queue` (too many calls waiting). */
  onRefusal?: (reason: FairShareRefusal["reason"]) => void;
  /** Told the isolate CPU time each call of an account was charged (metering). */
  onCpuTime?: (account: string, ms: number) => void;
  /** The account's own CPU budget per window (its plan's `sandboxCpuMs`); null: the share's default. */
  cpuBudgetOf?: (account: string) => Promise<number | null>;
}

/** A program whose calls take a turn of its account first. */
class FairShareProgram implements SandboxProgram {
  private readonly inner: SandboxProgram;
  private readonly account: string;
  private readonly pool: FairSharePool;

  constructor(pool: FairSharePool, inner: SandboxProgram, account: string) {
    this.pool = pool;
    this.inner = inner;
    this.account = account;
  }

  get key(): string {
    return this.inner.key;
  }

  get isRetired(): boolean {
    return this.inner.isRetired;
  }

  call(name: string, args?: unknown[], options: CallOptions = {}): Promise<unknown> {
    return this.pool.admitted(this.key, this.account, options, (o) => this.inner.call(name, args, o));
  }

  evaluate(
    code: string,
    bindings?: Record<string, unknown>,
    options: EvaluateOptions = {},
  ): Promise<unknown> {
    return this.pool.admitted(this.key, this.account, options, (o) => this.inner.evaluate(code, bindings, o));
  }

  /** Loading only (the program's top-level code, within the load time limit): not admitted. */
  warm(timeoutMs?: number): Promise<void> {
    return this.inner.warm(timeoutMs);
  }
}

export class FairSharePool implements SandboxPool {
  private readonly inner: SandboxPool;
  private readonly share: FairShare;
  private readonly timeoutMs: number;
  private readonly onRefusal: (reason: FairShareRefusal["reason"]) => void;
  private readonly onCpuTime: (account: string, ms: number) => void;
  private readonly cpuBudgetOf: (account: string) => Promise<number | null>;
  private readonly programs = new WeakMap<SandboxProgram, FairShareProgram>();

  constructor(inner: SandboxPool, share: FairShare, options: FairSharePoolOptions) {
    this.inner = inner;
    this.share = share;
    this.timeoutMs = options.timeoutMs;
    this.onRefusal = options.onRefusal ?? (() => {});
    this.onCpuTime = options.onCpuTime ?? (() => {});
    this.cpuBudgetOf = options.cpuBudgetOf ?? (async () => null);
  }

  get allowLoopbackFetch(): boolean {
    return this.inner.allowLoopbackFetch;
  }

  get isClosed(): boolean {
    return this.inner.isClosed;
  }

  program(key: string, sources: string | ProgramSource[], options: ProgramOptions = {}): SandboxProgram {
    const inner = this.inner.program(key, sources, options);
    const account = options.account ?? key;
    let program = this.programs.get(inner);
    if (!program) {
      program = new FairShareProgram(this, inner, account);
      this.programs.set(inner, program);
    }
    return program;
  }

  get(key: string): SandboxProgram | undefined {
    const inner = this.inner.get(key);
    return inner && this.programs.get(inner);
  }

  call(key: string, name: string, args?: unknown[], options?: CallOptions): Promise<unknown> {
    const program = this.get(key);
    return program ? program.call(name, args, options) : this.missing(key);
  }

  evaluate(
    key: string,
    code: string,
    bindings?: Record<string, unknown>,
    options?: EvaluateOptions,
  ): Promise<unknown> {
    const program = this.get(key);
    return program ? program.evaluate(code, bindings, options) : this.missing(key);
  }

  drop(key: string): void {
    this.inner.drop(key);
  }

  dropUnder(prefix: string): void {
    this.inner.dropUnder(prefix);
  }

  stats(): SandboxStats {
    return this.inner.stats();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /**
   * @internal Runs `run` in a turn of `account`: the wait counts in the call's
   * time limit; the turn ends with the CPU time the call spent in its isolate.
   */
  async admitted<O extends CallOptions>(
    programKey: string,
    account: string,
    options: O,
    run: (options: O) => Promise<unknown>,
  ): Promise<unknown> {
    const timeoutMs = Math.max(1, options.timeoutMs ?? this.timeoutMs);
    const started = Date.now();
    const turn = await this.turn(account, programKey, timeoutMs);
    let cpuMs = 0;
    try {
      return await run({
        ...options,
        timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)),
        onCpuTime: (ms) => {
          cpuMs = ms;
          options.onCpuTime?.(ms);
        },
      });
    } catch (e) {
      if (e instanceof SandboxError && (e.kind === "memory" || e.kind === "crashed")) {
        cpuMs = Math.max(cpuMs, LOST_ISOLATE_CHARGE_MS);
      }
      // The call ran with what its wait for a turn left of its limit; it ran past the caller's limit.
      if (e instanceof SandboxTimeoutError && e.timeoutMs !== timeoutMs) {
        throw new SandboxTimeoutError(timeoutMs, `The call did not finish within ${timeoutMs} ms`, {
          programKey: e.programKey,
          cause: e,
        });
      }
      throw e;
    } finally {
      turn.end(cpuMs);
      this.onCpuTime(account, cpuMs);
    }
  }

  /** A turn of `account` within `timeoutMs`; 429 when the account is refused, a timeout when none comes in time. */
  private async turn(account: string, programKey: string, timeoutMs: number): Promise<Turn> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      const budget = (await this.cpuBudgetOf(account)) ?? undefined;
      return await this.share.turn(account, abort.signal, budget);
    } catch (e) {
      if (e instanceof FairShareRefusal) {
        this.onRefusal(e.reason);
        throw errors.sandboxShareUsed(Math.max(1, Math.ceil(e.retryAfterMs / 1000)));
      }
      if (abort.signal.aborted) {
        throw new SandboxTimeoutError(
          timeoutMs,
          `The account's sandbox work got no turn within ${timeoutMs} ms`,
          {
            programKey,
          },
        );
      }
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  private missing(key: string): Promise<never> {
    return Promise.reject(new SandboxError("argument", `No sandbox program ${key}`, { programKey: key }));
  }
}
