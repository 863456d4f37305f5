/**
 * The JavaScript sandbox of the data service: pools of isolated-vm isolates,
 * one pool per "program" (a key chosen by the caller, e.g.
 * `<account>/<project>/auth`, plus a hash of its code and host-function names).
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
import { createHash } from "node:crypto";
import { SandboxError, SandboxTimeoutError } from "./errors.ts";
import { toJsonText, utf8LengthExceeds } from "./json.ts";
import {
  type CallOptions,
  type EvaluateOptions,
  type HostFunction,
  type HostFunctionSpec,
  type HostFunctions,
  type ProgramSource,
  type SandboxLogger,
  type SandboxStats,
  silentLogger,
} from "./types.ts";
import { IsolateWorker, type WorkerLimits, type WorkerOwner } from "./worker.ts";

export interface SandboxPoolOptions {
  /** Told the outcome of every call (`ok`, or the SandboxError kind: `timeout`, `script`, …), e.g. for metrics. */
  onCall?: (outcome: string) => void;
  /** Memory limit of each isolate (isolated-vm `memoryLimit`, min 8). Default 32. */
  memoryLimitMb?: number;
  /** Default wall-clock limit of a call, including time queued for an isolate. Default 1000. */
  timeoutMs?: number;
  /** Upper bound a caller may ask for with `CallOptions.timeoutMs`. Default 30000. */
  maxTimeoutMs?: number;
  /** Time limit for creating an isolate and running the program's top-level code. Default 2 × timeoutMs. */
  loadTimeoutMs?: number;
  /** Isolates that may serve one program at the same time. Default 2. */
  maxIsolatesPerProject?: number;
  /** Isolates in the whole pool; past it, idle isolates of other programs are evicted. Default 64. */
  maxIsolates?: number;
  /** Calls that may wait for an isolate of one program. Default 100. */
  maxQueuedCallsPerProgram?: number;
  /** An isolate whose used heap exceeds this after a call is replaced. Default memoryLimitMb / 2. */
  recycleAfterHeapMb?: number;
  /** Idle isolates older than this are disposed. Default 5 minutes. */
  idleIsolateTtlMs?: number;
  /** Largest result (JSON, bytes) a call may return. Default 1 MiB. */
  maxResultBytes?: number;
  /** Largest arguments / bindings (JSON, bytes) the host may pass in. Default 4 MiB. */
  maxArgumentBytes?: number;
  /** setTimeout inside the sandbox: at most this many per call … Default 100. */
  maxTimersPerCall?: number;
  /** … each delayed at most this long (a longer delay fires after this one). Default 5000. */
  maxTimerDelayMs?: number;
  /** Development only: lets `tessera.fetchJson` reach loopback addresses (and only those, in addition). */
  allowLoopbackFetch: boolean;
  logger?: SandboxLogger;
}

type Limits = Required<Omit<SandboxPoolOptions, "logger" | "allowLoopbackFetch" | "onCall">>;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const IDENTIFIER_PATH = /^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$/;
const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await arguments eval undefined NaN Infinity"
  ).split(" "),
);
const LOAD_FAILURE_TTL_MS = 10_000;

interface Waiter {
  resolve(worker: IsolateWorker): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

function normaliseHostFunctions(
  hostFunctions: HostFunctions | undefined,
): Map<string, { fn: HostFunction; sync: boolean }> {
  const out = new Map<string, { fn: HostFunction; sync: boolean }>();
  for (const [path, spec] of Object.entries(hostFunctions ?? {})) {
    if (!IDENTIFIER_PATH.test(path) || path.split(".").some((p) => RESERVED.has(p))) {
      throw new TypeError(`Invalid host function path: ${path}`);
    }
    const s = spec as HostFunctionSpec;
    out.set(path, typeof s === "function" ? { fn: s, sync: false } : { fn: s.fn, sync: s.sync === true });
  }
  return out;
}

function programHash(sources: ProgramSource[], hostFns: Map<string, { sync: boolean }>): string {
  const h = createHash("sha256");
  for (const s of sources) {
    h.update(`${s.filename ?? ""}\u0000${s.code.length}\u0000`);
    h.update(s.code);
  }
  for (const [path, { sync }] of [...hostFns].sort(([a], [b]) => (a < b ? -1 : 1)))
    h.update(`\u0001${path}:${sync}`);
  return h.digest("hex");
}

/** A program: its code, its host functions and the isolates that run it. Get one from `SandboxPool.program`. */
export class SandboxProgram implements WorkerOwner {
  readonly key: string;
  readonly hash: string;
  readonly sources: ProgramSource[];
  readonly hostFunctionPaths: { path: string; sync: boolean }[];
  readonly logger: SandboxLogger;
  private hostFns: Map<string, { fn: HostFunction; sync: boolean }>;
  private readonly pool: SandboxPool;
  /** @internal */ readonly workers = new Set<IsolateWorker>();
  /** @internal */ idle: IsolateWorker[] = [];
  private waiters: Waiter[] = [];
  private creating = 0;
  /** Isolates back from a call, being checked before they serve again. */
  private checking = 0;
  private busy = 0;
  private retired = false;
  private loadFailure: { error: SandboxError; until: number } | undefined;

  /** @internal use SandboxPool.program */
  constructor(
    pool: SandboxPool,
    key: string,
    sources: ProgramSource[],
    hostFns: Map<string, { fn: HostFunction; sync: boolean }>,
    hash: string,
  ) {
    this.pool = pool;
    this.key = key;
    this.sources = sources;
    this.hostFns = hostFns;
    this.hash = hash;
    this.logger = pool.logger;
    this.hostFunctionPaths = [...hostFns].map(([path, { sync }]) => ({ path, sync }));
  }

  /**
   * Calls a function of the program: a global function name or a dotted path
   * (`lib.fn`, called with `lib` as `this`), with `args` copied in as JSON.
   * Resolves to the (awaited) result, copied out as plain JSON data.
   */
  call(name: string, args: unknown[] = [], options: CallOptions = {}): Promise<unknown> {
    if (!IDENTIFIER_PATH.test(name)) {
      return Promise.reject(
        new SandboxError("argument", "The function name must be an identifier or a dotted path"),
      );
    }
    let payload: string;
    try {
      payload = toJsonText(args, "The arguments", this.pool.limits.maxArgumentBytes, this.key);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.execute("call", name, payload, options);
  }

  /**
   * Evaluates `code` (an expression, or with `kind: "body"` an async function
   * body) with `bindings` as local variables, e.g. `row`, `oldRow`. A binding
   * named like a host-function namespace (`logicContext`) also gets that
   * namespace's functions merged into it.
   */
  evaluate(
    code: string,
    bindings: Record<string, unknown> = {},
    options: EvaluateOptions = {},
  ): Promise<unknown> {
    const kind = options.kind ?? "expression";
    if (kind !== "expression" && kind !== "body") {
      return Promise.reject(new SandboxError("argument", `Unknown evaluation kind ${String(kind)}`));
    }
    if (typeof code !== "string")
      return Promise.reject(new SandboxError("argument", "The code must be a string"));
    const names = Object.keys(bindings);
    for (const n of names) {
      if (!IDENTIFIER.test(n) || RESERVED.has(n)) {
        return Promise.reject(new SandboxError("argument", `Invalid binding name: ${n}`));
      }
    }
    let payload: string;
    try {
      payload = toJsonText(
        [names, Object.values(bindings)],
        "The bindings",
        this.pool.limits.maxArgumentBytes,
        this.key,
      );
    } catch (e) {
      return Promise.reject(e);
    }
    return this.execute(kind, code, payload, options);
  }

  /** Starts one isolate now (if none exists) so that the first call is fast and load errors show early. */
  async warm(timeoutMs?: number): Promise<void> {
    if (this.workers.size > 0) return;
    const worker = await this.acquire(
      Date.now() + this.pool.clampTimeout(timeoutMs ?? this.pool.limits.loadTimeoutMs),
    );
    this.release(worker, false);
  }

  /** True once another registration of the same key (new code) or `drop` replaced this program. */
  get isRetired(): boolean {
    return this.retired;
  }

  // ---- internals ------------------------------------------------------------------------------

  private async execute(
    mode: string,
    target: string,
    payload: string,
    options: CallOptions,
  ): Promise<unknown> {
    const timeoutMs = this.pool.clampTimeout(options.timeoutMs ?? this.pool.limits.timeoutMs);
    const deadline = Date.now() + timeoutMs;
    const worker = await this.acquire(deadline);
    let broken = false;
    try {
      const answer = await worker.run(mode, target, payload, deadline, options.context);
      const value = this.decode(answer);
      this.pool.onCall("ok");
      return value;
    } catch (e) {
      this.pool.onCall(e instanceof SandboxError ? e.kind : "error");
      broken = !(e instanceof SandboxError) || !["script", "result"].includes(e.kind);
      if (e instanceof SandboxTimeoutError && e.timeoutMs !== timeoutMs) {
        throw new SandboxTimeoutError(timeoutMs, `The call did not finish within ${timeoutMs} ms`, {
          programKey: this.key,
          cause: e,
        });
      }
      throw e;
    } finally {
      this.release(worker, broken);
    }
  }

  private decode(answer: string): unknown {
    const tag = answer.charAt(0);
    const body = answer.slice(1);
    if (tag === "U") return undefined;
    if (tag === "R") {
      if (utf8LengthExceeds(body, this.pool.limits.maxResultBytes)) {
        throw new SandboxError(
          "result",
          `The result is larger than ${this.pool.limits.maxResultBytes} bytes of JSON`,
          {
            programKey: this.key,
          },
        );
      }
      try {
        return JSON.parse(body) as unknown;
      } catch {
        throw new SandboxError("result", "The result is not valid JSON", { programKey: this.key });
      }
    }
    if (tag === "E") {
      let name = "Error";
      let message = "unknown error";
      let isResult = false;
      try {
        const parsed = JSON.parse(body) as { name?: unknown; message?: unknown; result?: unknown };
        if (typeof parsed.name === "string") name = parsed.name;
        if (typeof parsed.message === "string") message = parsed.message;
        isResult = parsed.result === true;
      } catch {
        // keep the defaults
      }
      if (isResult) throw new SandboxError("result", `Bad result: ${message}`, { programKey: this.key });
      throw new SandboxError("script", `${name}: ${message}`, {
        programKey: this.key,
        scriptError: { name, message },
      });
    }
    throw new SandboxError("result", "The sandbox gave an unreadable answer", { programKey: this.key });
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
          reject(
            new SandboxTimeoutError(ms, `No isolate became free for this program within ${ms} ms`, {
              programKey: this.key,
            }),
          );
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
    while (this.waiters.length > 0) {
      const worker = this.takeIdleForWaiter();
      if (!worker) break;
      const waiter = this.waiters.shift()!;
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
        this.logger.warn(
          { programKey: this.key, kind: e.kind, err: e.message },
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
  lookupHostFunction(path: string): { fn: HostFunction; sync: boolean } | undefined {
    return this.hostFns.get(path);
  }

  /** @internal WorkerOwner */
  onWorkerGone(worker: IsolateWorker, reason: string): void {
    if (!this.workers.delete(worker)) return;
    this.idle = this.idle.filter((w) => w !== worker);
    this.pool.isolateGone(reason);
    this.pool.forgetIfDrained(this);
  }

  /** @internal WorkerOwner */
  onCatastrophicError(): void {
    this.pool.catastrophicError();
  }

  /** @internal Same code, newer host-function implementations (e.g. a changed allow-list). */
  replaceHostFunctions(hostFns: Map<string, { fn: HostFunction; sync: boolean }>): void {
    this.hostFns = hostFns;
  }

  /** @internal */
  retire(): void {
    this.retired = true;
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

export class SandboxPool {
  readonly allowLoopbackFetch: boolean;
  /** @internal */ readonly logger: SandboxLogger;
  /** @internal */ readonly onCall: (outcome: string) => void;
  /** @internal */ readonly limits: Limits;
  /** @internal */ readonly workerLimits: WorkerLimits;
  private readonly programs = new Map<string, SandboxProgram>();
  /** Every program that still has isolates (current or retired). */
  private readonly live = new Set<SandboxProgram>();
  private reserved = 0;
  private closed = false;
  private readonly disposedByReason: Record<string, number> = {};
  private catastrophicErrors = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: SandboxPoolOptions) {
    const memoryLimitMb = Math.max(8, options.memoryLimitMb ?? 32);
    const timeoutMs = Math.max(1, options.timeoutMs ?? 1000);
    this.limits = {
      memoryLimitMb,
      timeoutMs,
      maxTimeoutMs: Math.max(timeoutMs, options.maxTimeoutMs ?? 30_000),
      loadTimeoutMs: Math.max(1, options.loadTimeoutMs ?? 2 * timeoutMs),
      maxIsolatesPerProject: Math.max(1, options.maxIsolatesPerProject ?? 2),
      maxIsolates: Math.max(1, options.maxIsolates ?? 64),
      maxQueuedCallsPerProgram: Math.max(0, options.maxQueuedCallsPerProgram ?? 100),
      recycleAfterHeapMb: Math.max(1, options.recycleAfterHeapMb ?? Math.floor(memoryLimitMb / 2)),
      idleIsolateTtlMs: Math.max(1000, options.idleIsolateTtlMs ?? 5 * 60_000),
      maxResultBytes: Math.max(1024, options.maxResultBytes ?? 1024 * 1024),
      maxArgumentBytes: Math.max(1024, options.maxArgumentBytes ?? 4 * 1024 * 1024),
      maxTimersPerCall: Math.max(0, options.maxTimersPerCall ?? 100),
      maxTimerDelayMs: Math.max(0, options.maxTimerDelayMs ?? 5000),
    };
    this.workerLimits = {
      memoryLimitMb,
      loadTimeoutMs: this.limits.loadTimeoutMs,
      maxResultBytes: this.limits.maxResultBytes,
      maxHostArgumentBytes: this.limits.maxResultBytes,
      maxTimersPerCall: this.limits.maxTimersPerCall,
      maxTimerDelayMs: this.limits.maxTimerDelayMs,
      maxConsoleLines: 100,
      maxCompiled: 500,
      healthCheckMs: 250,
      recycleAfterHeapBytes: this.limits.recycleAfterHeapMb * 1024 * 1024,
    };
    this.allowLoopbackFetch = options.allowLoopbackFetch;
    this.logger = options.logger ?? silentLogger;
    this.onCall = options.onCall ?? (() => {});
    const sweepEvery = Math.min(30_000, Math.max(500, Math.floor(this.limits.idleIsolateTtlMs / 2)));
    this.sweeper = setInterval(() => this.sweep(), sweepEvery);
    this.sweeper.unref();
  }

  /**
   * The program registered under `key` with this code and these host
   * functions. Same code and host-function names as the current registration:
   * the same (warm) program, with the host-function implementations updated.
   * Different: a new program; the old one is retired.
   */
  program(
    key: string,
    sources: string | ProgramSource[],
    options: { hostFunctions?: HostFunctions } = {},
  ): SandboxProgram {
    if (this.closed) throw new SandboxError("unavailable", "The sandbox is shut down", { programKey: key });
    const list = typeof sources === "string" ? [{ code: sources }] : sources;
    for (const s of list) {
      if (typeof s?.code !== "string") throw new TypeError("Every program source needs its code as a string");
    }
    const hostFns = normaliseHostFunctions(options.hostFunctions);
    const hash = programHash(list, hostFns);
    const existing = this.programs.get(key);
    if (existing && existing.hash === hash) {
      existing.replaceHostFunctions(hostFns);
      return existing;
    }
    existing?.retire();
    if (existing) this.forgetIfDrained(existing);
    const program = new SandboxProgram(
      this,
      key,
      list.map((s) => ({ ...s })),
      hostFns,
      hash,
    );
    this.programs.set(key, program);
    this.live.add(program);
    return program;
  }

  /** The current program registered under `key`, if any. */
  get(key: string): SandboxProgram | undefined {
    return this.programs.get(key);
  }

  /** `pool.get(key).evaluate(...)`; fails with SandboxError("argument") when no program has that key. */
  evaluate(
    key: string,
    code: string,
    bindings: Record<string, unknown> = {},
    options: EvaluateOptions = {},
  ): Promise<unknown> {
    const program = this.programs.get(key);
    if (!program)
      return Promise.reject(new SandboxError("argument", `No sandbox program ${key}`, { programKey: key }));
    return program.evaluate(code, bindings, options);
  }

  /** `pool.get(key).call(...)`. */
  call(key: string, name: string, args: unknown[] = [], options: CallOptions = {}): Promise<unknown> {
    const program = this.programs.get(key);
    if (!program)
      return Promise.reject(new SandboxError("argument", `No sandbox program ${key}`, { programKey: key }));
    return program.call(name, args, options);
  }

  /** Forgets the program under `key` (e.g. its project was deleted) and disposes its isolates when idle. */
  drop(key: string): void {
    const program = this.programs.get(key);
    if (!program) return;
    this.programs.delete(key);
    program.retire();
    this.forgetIfDrained(program);
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
      programs: this.programs.size,
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
    this.programs.clear();
    this.live.clear();
  }

  // ---- internals used by programs ---------------------------------------------------------------

  /** @internal A caller-supplied timeout, within 1 ms .. maxTimeoutMs. */
  clampTimeout(ms: number): number {
    if (!Number.isFinite(ms)) return this.limits.timeoutMs;
    return Math.min(Math.max(1, Math.floor(ms)), this.limits.maxTimeoutMs);
  }

  /** @internal Makes room for one more isolate (evicting the least recently used idle one elsewhere). */
  reserveIsolate(requester: SandboxProgram): boolean {
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
    return true;
  }

  /** @internal */
  isolateGone(reason: string): void {
    this.reserved = Math.max(0, this.reserved - 1);
    this.disposedByReason[reason] = (this.disposedByReason[reason] ?? 0) + 1;
  }

  /** @internal */
  forgetIfDrained(program: SandboxProgram): void {
    if (program.isRetired && program.workers.size === 0 && this.programs.get(program.key) !== program) {
      this.live.delete(program);
    }
  }

  /** @internal */
  catastrophicError(): void {
    this.catastrophicErrors++;
  }

  private sweep(): void {
    const cutoff = Date.now() - this.limits.idleIsolateTtlMs;
    for (const p of [...this.live]) p.disposeIdleOlderThan(cutoff);
  }
}
