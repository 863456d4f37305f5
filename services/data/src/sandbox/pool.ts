/**
 * Isolates in this process: pools of isolated-vm isolates, one pool per
 * "program" (a key chosen by the caller, e.g. `<account>/<project>/auth`, plus
 * a hash of its code and host-function names). Each sandbox host process runs
 * one `IsolatePool` (process-pool.ts); unit tests use it directly.
 *
 * - Isolates are warm and reused; at most `maxIsolatesPerProject` per program
 *   run at once (further calls queue, within their own time limit).
 * - Registering a key with different code retires the old program: its idle
 *   isolates are disposed at once, busy ones after their call.
 * - Timeouts, memory-limit hits and crashes dispose the isolate concerned;
 *   the next call gets a fresh one. Isolates whose heap grew beyond
 *   `recycleAfterHeapMb` are replaced after their call; idle ones are
 *   disposed after `idleIsolateTtlMs`. `close()` disposes everything.
 *
 * Sandboxed code sees only copied plain JSON data and the host functions the
 * program was given; no require, process, timers beyond a bounded setTimeout,
 * WebAssembly or shared memory.
 */
import { fingerprint } from "../../../../shared/loggable-error.ts";
import { IsolateWaitTimeoutError, SandboxError } from "./errors.ts";
import {
  clampTimeout,
  type Limits,
  normaliseLimits,
  type SandboxPoolOptions,
  workerLimits,
} from "./limits.ts";
import { ProgramBase, type ProgramSpec, RegistryPool } from "./registry.ts";
import { callError, decodeAnswer, type Request } from "./requests.ts";
import {
  type CallOptions,
  type SandboxLogger,
  type SandboxPool,
  type SandboxStats,
  silentLogger,
} from "./types.ts";
import { IsolateWorker, type WorkerLimits, type WorkerOwner } from "./worker.ts";

export type { SandboxPoolOptions } from "./limits.ts";

export interface IsolatePoolOptions extends SandboxPoolOptions {
  /** Told when an isolate has a catastrophic error (its thread and memory are lost to this process). */
  onCatastrophicError?: () => void;
}

const LOAD_FAILURE_TTL_MS = 10_000;

interface Waiter {
  resolve(worker: IsolateWorker): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** A program of an `IsolatePool`. Get one from `IsolatePool.program`. */
export class IsolateProgram extends ProgramBase implements WorkerOwner {
  readonly hostFunctionPaths: { path: string; sync: boolean }[];
  readonly logger: SandboxLogger;
  private readonly pool: IsolatePool;
  /** @internal */ readonly workers = new Set<IsolateWorker>();
  /** @internal */ idle: IsolateWorker[] = [];
  private waiters: Waiter[] = [];
  private creating = 0;
  /** Isolates back from a call, being checked before they serve again. */
  private checking = 0;
  private busy = 0;
  private loadFailure: { error: SandboxError; until: number } | undefined;
  /** CPU time (ms) spent loading isolates that no call has been charged yet. */
  private loadCpuMs = 0;

  /** @internal use IsolatePool.program */
  constructor(pool: IsolatePool, spec: ProgramSpec) {
    super(spec);
    this.pool = pool;
    this.logger = pool.logger;
    this.hostFunctionPaths = [...spec.hostFns].map(([path, { sync }]) => ({ path, sync }));
  }

  protected get maxArgumentBytes(): number {
    return this.pool.limits.maxArgumentBytes;
  }

  async warm(timeoutMs?: number): Promise<void> {
    if (this.workers.size > 0) return;
    const worker = await this.acquire(
      Date.now() + this.pool.clampTimeout(timeoutMs ?? this.pool.limits.loadTimeoutMs),
    );
    this.release(worker, false);
  }

  /**
   * @internal Runs a request that is already encoded, by `deadline`; resolves
   * to the isolate's tagged answer, undecoded (the sandbox host process hands
   * it on as it is). Not counted by `onCall`. `onCpuTime`: see `CallOptions`.
   */
  async runRequest(
    request: Request,
    deadline: number,
    context: unknown,
    onCpuTime?: (ms: number) => void,
  ): Promise<string> {
    // Loading an isolate is charged to the next call that ends, whether it got the isolate or its load failure.
    let worker: IsolateWorker;
    try {
      worker = await this.acquire(deadline);
    } catch (e) {
      onCpuTime?.(this.takeLoadCpu());
      throw e;
    }
    const charge = onCpuTime && ((ms: number) => onCpuTime(ms + this.takeLoadCpu()));
    let broken = false;
    try {
      return await worker.run(request.mode, request.target, request.payload, deadline, context, charge);
    } catch (e) {
      broken = !(e instanceof SandboxError) || !["script", "result"].includes(e.kind);
      throw e;
    } finally {
      this.release(worker, broken);
    }
  }

  // ---- internals ------------------------------------------------------------------------------

  protected async execute(request: Request, options: CallOptions): Promise<unknown> {
    const timeoutMs = this.pool.clampTimeout(options.timeoutMs ?? this.pool.limits.timeoutMs);
    try {
      const answer = await this.runRequest(
        request,
        Date.now() + timeoutMs,
        options.context,
        options.onCpuTime,
      );
      const value = decodeAnswer(answer, this.pool.limits.maxResultBytes, this.key);
      this.pool.onCall("ok");
      return value;
    } catch (e) {
      this.pool.onCall(e instanceof SandboxError ? e.kind : "error");
      throw callError(e, timeoutMs, this.key);
    }
  }

  private acquire(deadline: number): Promise<IsolateWorker> {
    if (this.pool.isClosed) {
      return Promise.reject(
        new SandboxError("unavailable", "The sandbox is shut down", { programKey: this.key }),
      );
    }
    if (this.loadFailure) {
      if (this.loadFailure.until > Date.now()) return Promise.reject(this.loadFailure.error);
      this.loadFailure = undefined;
    }
    if (this.waiters.length === 0) {
      const worker = this.takeIdle();
      if (worker) return Promise.resolve(worker);
    }
    if (this.waiters.length >= this.pool.limits.maxQueuedCallsPerProgram) {
      return Promise.reject(
        new SandboxError("unavailable", "Too many calls are waiting for this program", {
          programKey: this.key,
        }),
      );
    }
    return new Promise<IsolateWorker>((resolve, reject) => {
      const ms = Math.max(1, deadline - Date.now());
      const waiter: Waiter = {
        resolve: (w) => {
          this.busy++;
          resolve(w);
        },
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(new IsolateWaitTimeoutError(ms, { programKey: this.key }));
        }, ms),
      };
      this.waiters.push(waiter);
      this.pump();
    });
  }

  private takeIdle(): IsolateWorker | undefined {
    for (let w = this.idle.pop(); w; w = this.idle.pop()) {
      if (!w.isDisposed) {
        this.busy++;
        return w;
      }
    }
    return undefined;
  }

  /** Gives idle isolates to waiting calls and starts new isolates while there is room. */
  private pump(): void {
    for (let waiter = this.waiters[0]; waiter !== undefined; waiter = this.waiters[0]) {
      const worker = this.takeIdleForWaiter();
      if (!worker) break;
      this.waiters.shift();
      clearTimeout(waiter.timer);
      waiter.resolve(worker);
    }
    while (
      this.waiters.length > this.creating + this.checking &&
      this.workers.size + this.creating < this.pool.limits.maxIsolatesPerProject
    ) {
      if (!this.pool.reserveIsolate(this)) {
        if (this.workers.size + this.creating === 0) {
          this.rejectWaiters(
            new SandboxError("unavailable", "The sandbox is at its isolate capacity", {
              programKey: this.key,
            }),
          );
        }
        break;
      }
      this.spawn();
    }
  }

  private takeIdleForWaiter(): IsolateWorker | undefined {
    for (let w = this.idle.pop(); w; w = this.idle.pop()) if (!w.isDisposed) return w;
    return undefined;
  }

  private spawn(): void {
    this.creating++;
    const limits = this.pool.workerLimits;
    IsolateWorker.create(this, limits).then(
      (worker) => {
        this.creating--;
        this.workers.add(worker);
        if (this.pool.isClosed) {
          worker.dispose("pool closed");
          return;
        }
        this.idle.push(worker);
        this.pump();
      },
      (error: unknown) => {
        this.creating--;
        this.pool.isolateGone("load failed");
        const e =
          error instanceof SandboxError
            ? error
            : new SandboxError("load", "The program could not be loaded", {
                programKey: this.key,
                cause: error,
              });
        // The message can quote the program's code, which embeds its configuration.
        this.logger.warn(
          { programKey: this.key, kind: e.kind, fingerprint: fingerprint(e.message) },
          "sandbox program failed to load",
        );
        if (e.kind !== "unavailable")
          this.loadFailure = { error: e, until: Date.now() + LOAD_FAILURE_TTL_MS };
        this.rejectWaiters(e);
      },
    );
  }

  private rejectWaiters(error: SandboxError): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.reject(error);
    }
  }

  /** @internal Returns a worker after a call; checks it before it serves again. */
  release(worker: IsolateWorker, broken: boolean): void {
    this.busy--;
    if (broken || worker.isDisposed || this.retired || this.pool.isClosed) {
      worker.dispose(broken ? "failed call" : "retired");
      this.pump();
      return;
    }
    this.checking++;
    void worker.healthProblem().then((problem) => {
      this.checking--;
      if (problem) {
        this.logger.debug({ programKey: this.key, reason: problem }, "sandbox isolate recycled");
        worker.dispose(problem);
      } else if (this.retired || this.pool.isClosed) {
        worker.dispose("retired");
      } else {
        this.idle.push(worker);
      }
      this.pump();
    });
  }

  /** @internal WorkerOwner */
  onWorkerGone(worker: IsolateWorker, reason: string): void {
    if (!this.workers.delete(worker)) return;
    this.idle = this.idle.filter((w) => w !== worker);
    this.pool.isolateGone(reason);
    this.pool.forgetIfDrained(this);
  }

  /** @internal WorkerOwner */
  chargeLoadCpu(ms: number): void {
    this.loadCpuMs += ms;
  }

  private takeLoadCpu(): number {
    const ms = this.loadCpuMs;
    this.loadCpuMs = 0;
    return ms;
  }

  /** @internal WorkerOwner */
  onCatastrophicError(): void {
    this.pool.catastrophicError();
  }

  /** @internal */
  override retire(): void {
    super.retire();
    for (const w of [...this.idle]) w.dispose("retired");
    this.idle = [];
  }

  /** @internal */
  disposeIdleOlderThan(cutoff: number): void {
    for (const w of [...this.idle]) if (w.lastUsed < cutoff) w.dispose("idle");
  }

  /** @internal */
  close(): void {
    this.retired = true;
    this.rejectWaiters(new SandboxError("unavailable", "The sandbox is shut down", { programKey: this.key }));
    for (const w of [...this.workers]) w.dispose("pool closed");
  }

  /** @internal */
  counts(): { isolates: number; busy: number; idle: number; queued: number } {
    return {
      isolates: this.workers.size,
      busy: this.busy,
      idle: this.idle.length,
      queued: this.waiters.length,
    };
  }
}

/** Isolates in this process. Production runs them in sandbox host processes (`ProcessSandboxPool`). */
export class IsolatePool extends RegistryPool<IsolateProgram> implements SandboxPool {
  readonly allowLoopbackFetch: boolean;
  /** @internal */ readonly logger: SandboxLogger;
  /** @internal */ readonly onCall: (outcome: string) => void;
  /** @internal */ readonly limits: Limits;
  /** @internal */ readonly workerLimits: WorkerLimits;
  /** Every program that still has isolates (current or retired). */
  private readonly live = new Set<IsolateProgram>();
  private reserved = 0;
  private closed = false;
  private readonly disposedByReason: Record<string, number> = {};
  private catastrophicErrors = 0;
  private readonly onCatastrophicError: () => void;
  private changes = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: IsolatePoolOptions) {
    super();
    this.limits = normaliseLimits(options);
    this.workerLimits = workerLimits(this.limits);
    this.allowLoopbackFetch = options.allowLoopbackFetch;
    this.logger = options.logger ?? silentLogger;
    this.onCall = options.onCall ?? (() => {});
    this.onCatastrophicError = options.onCatastrophicError ?? (() => {});
    const sweepEvery = Math.min(30_000, Math.max(500, Math.floor(this.limits.idleIsolateTtlMs / 2)));
    this.sweeper = setInterval(() => this.sweep(), sweepEvery);
    this.sweeper.unref();
  }

  protected createProgram(spec: ProgramSpec): IsolateProgram {
    const program = new IsolateProgram(this, spec);
    this.live.add(program);
    return program;
  }

  protected forgetProgram(program: IsolateProgram): void {
    this.forgetIfDrained(program);
  }

  /** Changes whenever an isolate is created or disposed (the sandbox host process reports stats then). */
  get changeCount(): number {
    return this.changes;
  }

  stats(): SandboxStats {
    let isolates = 0;
    let busy = 0;
    let idle = 0;
    let queued = 0;
    for (const p of this.live) {
      const c = p.counts();
      isolates += c.isolates;
      busy += c.busy;
      idle += c.idle;
      queued += c.queued;
    }
    return {
      programs: this.programCount,
      isolates,
      busy,
      idle,
      queued,
      disposed: { ...this.disposedByReason },
      catastrophicErrors: this.catastrophicErrors,
    };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Disposes every isolate; pending and later calls fail with SandboxError("unavailable"). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    for (const p of [...this.live]) p.close();
    this.forgetAllPrograms();
    this.live.clear();
  }

  // ---- internals used by programs ---------------------------------------------------------------

  /** @internal A caller-supplied timeout, within 1 ms .. maxTimeoutMs. */
  clampTimeout(ms: number): number {
    return clampTimeout(this.limits, ms);
  }

  /** @internal Makes room for one more isolate (evicting the least recently used idle one elsewhere). */
  reserveIsolate(requester: IsolateProgram): boolean {
    if (this.reserved >= this.limits.maxIsolates) {
      let victim: IsolateWorker | undefined;
      for (const p of this.live) {
        if (p === requester) continue;
        for (const w of p.idle) if (!victim || w.lastUsed < victim.lastUsed) victim = w;
      }
      if (!victim) return false;
      victim.dispose("evicted");
    }
    this.reserved++;
    this.changes++;
    return true;
  }

  /** @internal */
  isolateGone(reason: string): void {
    this.reserved = Math.max(0, this.reserved - 1);
    this.disposedByReason[reason] = (this.disposedByReason[reason] ?? 0) + 1;
    this.changes++;
  }

  /** @internal */
  forgetIfDrained(program: IsolateProgram): void {
    if (program.isRetired && program.workers.size === 0 && this.get(program.key) !== program) {
      this.live.delete(program);
    }
  }

  /** @internal */
  catastrophicError(): void {
    this.catastrophicErrors++;
    this.changes++;
    this.onCatastrophicError();
  }

  private sweep(): void {
    const cutoff = Date.now() - this.limits.idleIsolateTtlMs;
    for (const p of [...this.live]) p.disposeIdleOlderThan(cutoff);
  }
}
