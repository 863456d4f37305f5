/**
 * One isolate with one context: the bootstrap, then the program's sources,
 * then calls one at a time (a worker is leased exclusively to one call).
 *
 * Limits enforced here:
 * - wall clock: every load and call races a host timer; when it fires the
 *   isolate is disposed, which also stops code spinning after an `await`
 *   (isolated-vm's own `timeout` only covers synchronous execution);
 * - memory: isolated-vm's `memoryLimit`; an isolate that hits it is disposed;
 *   one whose heap cannot be collected below it has a "catastrophic error",
 *   which fails its call at once (its thread and memory stay lost until the
 *   process ends: the pool's owner decides about that);
 * - nothing runs outside a call: answers of async host functions and timers
 *   are delivered only while their call runs (checked here and again inside
 *   the isolate), so no user code is woken up in an idle isolate; a post-call
 *   health check disposes an isolate that is still busy anyway.
 */
import ivm from "isolated-vm";
import { safeText } from "../../../../shared/safe-text.ts";
import { UNDEFINED_ANSWER } from "./answers.ts";
import { BOOTSTRAP_SOURCE, type BootstrapOptions } from "./bootstrap.ts";
import { SandboxError, SandboxHostError, SandboxTimeoutError } from "./errors.ts";
import { hostFailureAnswer, hostValueAnswer } from "./host-answers.ts";
import type { HostCallInfo, HostFunction, ProgramSource, SandboxLogger } from "./types.ts";

export interface WorkerLimits {
  memoryLimitMb: number;
  loadTimeoutMs: number;
  maxResultBytes: number;
  maxHostArgumentBytes: number;
  maxTimersPerCall: number;
  maxTimerDelayMs: number;
  maxConsoleLines: number;
  maxCompiled: number;
  healthCheckMs: number;
  recycleAfterHeapBytes: number;
}

/** What a worker needs from the program it belongs to. */
export interface WorkerOwner {
  readonly key: string;
  readonly sources: ProgramSource[];
  readonly hostFunctionPaths: { path: string; sync: boolean }[];
  lookupHostFunction(path: string): { fn: HostFunction; sync: boolean } | undefined;
  readonly logger: SandboxLogger;
  /** Called once when the worker's isolate is gone (for whatever reason). */
  onWorkerGone(worker: IsolateWorker, reason: string): void;
  onCatastrophicError(): void;
  /** Told the CPU time (ms) the isolate spent being created and loading the program, succeeded or not. */
  chargeLoadCpu(ms: number): void;
}

interface ActiveCall {
  context: unknown;
  deadline: number;
  abort: AbortController;
  callState: Map<string, unknown>;
  timers: number;
  consoleLines: number;
}

export type Answer = string;

const IVM_TIMEOUT = "Script execution timed out.";

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Describes a value thrown across the boundary (the isolate copies what it throws). */
function describeThrown(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  if (e !== null && typeof e === "object") {
    const m = (e as { message?: unknown }).message;
    return typeof m === "string" ? `a non-Error object was thrown: ${m}` : "a non-Error object was thrown";
  }
  return `a non-Error value was thrown: ${String(e)}`;
}

export class IsolateWorker {
  readonly isolate: ivm.Isolate;
  lastUsed = Date.now();
  calls = 0;
  private context: ivm.Context | undefined;
  private invokeRef: ivm.Reference | undefined;
  private deliverRef: ivm.Reference | undefined;
  private current: ActiveCall | undefined;
  /** Fails the load or call now running (set while one runs). */
  private interrupt: ((error: SandboxError) => void) | undefined;
  private gone = false;
  private catastrophic = false;
  /** The isolate's CPU time when it was disposed (it cannot be read afterwards). */
  private cpuNsAtDispose: bigint | undefined;
  private readonly owner: WorkerOwner;
  private readonly limits: WorkerLimits;

  private constructor(owner: WorkerOwner, limits: WorkerLimits) {
    this.owner = owner;
    this.limits = limits;
    this.isolate = new ivm.Isolate({
      memoryLimit: limits.memoryLimitMb,
      onCatastrophicError: (message: string) => {
        // isolated-vm parks the isolate's thread for good and never settles what
        // it was running: the call fails now, and only ending the process gives
        // the thread and the memory back (the owner decides).
        this.catastrophic = true;
        owner.logger.error({ programKey: owner.key, message }, "sandbox isolate had a catastrophic error");
        const memory = /memory/i.test(message);
        this.interrupt?.(
          new SandboxError(
            memory ? "memory" : "crashed",
            memory
              ? `The isolate ran out of memory (${limits.memoryLimitMb} MB) and cannot be recovered`
              : `The isolate had a catastrophic error (${safeText(message, 200)})`,
            { programKey: owner.key },
          ),
        );
        owner.onCatastrophicError();
        this.dispose("catastrophic");
      },
    });
  }

  /** Creates the isolate, runs the bootstrap and the program's sources. */
  static async create(owner: WorkerOwner, limits: WorkerLimits): Promise<IsolateWorker> {
    const worker = new IsolateWorker(owner, limits);
    const started = { cpuNs: 0n, wallMs: Date.now() };
    try {
      await worker.load();
      return worker;
    } catch (e) {
      worker.dispose("load failed");
      throw e;
    } finally {
      owner.chargeLoadCpu(worker.cpuMsSince(started));
    }
  }

  get isDisposed(): boolean {
    return this.gone || this.isolate.isDisposed;
  }

  private async load(): Promise<void> {
    const { owner, limits } = this;
    const deadline = Date.now() + limits.loadTimeoutMs;
    const requestSink = new ivm.Callback(
      (id: number, name: string, argsJson: string) => this.onRequest(id, name, argsJson),
      { ignored: true },
    );
    const dispatchSync = new ivm.Callback((name: string, argsJson: string): string =>
      this.dispatchSync(name, argsJson),
    );
    const consoleSink = new ivm.Callback((level: string, text: string) => this.consoleLine(level, text), {
      ignored: true,
    });
    const options: BootstrapOptions = {
      hostFunctions: owner.hostFunctionPaths,
      maxResultChars: limits.maxResultBytes,
      maxCompiled: limits.maxCompiled,
      maxConsoleLines: limits.maxConsoleLines,
      maxTimersPerCall: limits.maxTimersPerCall,
    };
    await this.withDeadline("load", deadline, async () => {
      this.context = await this.isolate.createContext();
      const entry = (await this.context.evalClosure(
        BOOTSTRAP_SOURCE,
        [requestSink, dispatchSync, consoleSink, JSON.stringify(options)],
        { result: { reference: true } },
      )) as ivm.Reference;
      this.invokeRef = (await entry.get(0, { reference: true })) as ivm.Reference;
      this.deliverRef = (await entry.get(1, { reference: true })) as ivm.Reference;
      entry.release();
      for (const [i, source] of owner.sources.entries()) {
        const filename = source.filename ?? `program-${i}.js`;
        let script: ivm.Script;
        try {
          script = await this.isolate.compileScript(source.code, { filename });
        } catch (e) {
          throw this.translate(e, `${filename} does not compile`, limits.loadTimeoutMs, "load");
        }
        try {
          await script.run(this.context, { timeout: Math.max(1, deadline - Date.now()) });
        } catch (e) {
          throw this.translate(e, `${filename} failed while loading`, limits.loadTimeoutMs, "load");
        } finally {
          script.release();
        }
      }
    });
  }

  /**
   * Runs `invoke(mode, target, payloadJson)` inside the isolate and returns its
   * tagged answer. Throws SandboxTimeoutError / SandboxError(memory|crashed);
   * after any of those the worker is unusable. `onCpuTime` is told the CPU
   * time (ms) the isolate spent on the call, once, however it ends.
   */
  async run(
    mode: string,
    target: string,
    payloadJson: string,
    deadline: number,
    context: unknown,
    onCpuTime?: (ms: number) => void,
  ): Promise<Answer> {
    if (this.isDisposed || !this.invokeRef) {
      throw new SandboxError("crashed", "The isolate is no longer available", { programKey: this.owner.key });
    }
    const call: ActiveCall = {
      context,
      deadline,
      abort: new AbortController(),
      callState: new Map(),
      timers: 0,
      consoleLines: 0,
    };
    this.current = call;
    this.calls++;
    const invokeRef = this.invokeRef;
    const started = { cpuNs: this.cpuNs(), wallMs: Date.now() };
    try {
      const answer = await this.withDeadline("call", deadline, () =>
        invokeRef.apply(undefined, [mode, target, payloadJson], {
          arguments: { copy: true },
          result: { promise: true, copy: true },
          timeout: Math.max(1, deadline - Date.now()),
        }),
      );
      if (typeof answer !== "string") {
        throw new SandboxError("result", "The sandbox answered with something other than text", {
          programKey: this.owner.key,
        });
      }
      return answer;
    } finally {
      this.current = undefined;
      this.lastUsed = Date.now();
      call.abort.abort();
      onCpuTime?.(this.cpuMsSince(started));
    }
  }

  /** The isolate's CPU time so far (ns), if it can be read. */
  private cpuNs(): bigint | undefined {
    if (this.cpuNsAtDispose !== undefined) return this.cpuNsAtDispose;
    try {
      return this.isolate.cpuTime;
    } catch {
      return undefined;
    }
  }

  /** CPU time since `started`; the wall-clock time when the isolate's clock cannot be read (catastrophic error). */
  private cpuMsSince(started: { cpuNs: bigint | undefined; wallMs: number }): number {
    const now = this.cpuNs();
    if (started.cpuNs === undefined || now === undefined) return Date.now() - started.wallMs;
    return Number(now - started.cpuNs) / 1e6;
  }

  /**
   * Races `work` against a host timer. On expiry the isolate is disposed (which
   * also stops code running after an await) and SandboxTimeoutError is thrown.
   * A catastrophic error of the isolate ends the race at once (`interrupt`).
   */
  private async withDeadline<T>(
    phase: "load" | "call",
    deadline: number,
    work: () => Promise<T>,
  ): Promise<T> {
    const ms = Math.max(1, deadline - Date.now());
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
    const expiry = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        expired = true;
        this.dispose("timeout");
        reject(this.timeoutError(phase, ms));
      }, ms);
      this.interrupt = reject;
    });
    const attempt = work();
    attempt.catch(() => {});
    try {
      return await Promise.race([attempt, expiry]);
    } catch (e) {
      if (expired) throw this.timeoutError(phase, ms);
      throw this.translate(
        e,
        phase === "load" ? "The program failed while loading" : "The call failed",
        ms,
        phase,
      );
    } finally {
      clearTimeout(timer);
      this.interrupt = undefined;
    }
  }

  private timeoutError(phase: "load" | "call", ms: number): SandboxTimeoutError {
    const what = phase === "load" ? "Loading the program" : "The call";
    return new SandboxTimeoutError(ms, `${what} did not finish within ${ms} ms`, {
      programKey: this.owner.key,
    });
  }

  /** Maps whatever isolated-vm or the isolate threw onto a SandboxError (disposing the isolate if needed). */
  private translate(e: unknown, context: string, ms: number, phase: "load" | "call" = "call"): SandboxError {
    if (e instanceof SandboxError) return e;
    const programKey = this.owner.key;
    const message = e instanceof Error ? e.message : "";
    if (message === IVM_TIMEOUT) {
      this.dispose("timeout");
      return new SandboxTimeoutError(ms, `${context}: it ran past its time limit of ${ms} ms`, {
        programKey,
      });
    }
    if (this.isolate.isDisposed || this.gone) {
      const memory = /memory limit/i.test(message);
      this.dispose(memory ? "memory" : "crashed");
      return memory
        ? new SandboxError(
            "memory",
            `${context}: the isolate ran out of memory (${this.limits.memoryLimitMb} MB)`,
            {
              programKey,
            },
          )
        : new SandboxError("crashed", `${context}: the isolate stopped (${safeText(message, 200)})`, {
            programKey,
          });
    }
    if (phase === "load") return new SandboxError("load", `${context}: ${describeThrown(e)}`, { programKey });
    // Calls catch everything inside the isolate; reaching here means the bootstrap itself failed.
    this.dispose("crashed");
    return new SandboxError("crashed", `${context}: ${describeThrown(e)}`, { programKey });
  }

  /**
   * Cheap check after a call, before the isolate is reused: it must answer
   * within `healthCheckMs` (it is not still running code) and its heap must be
   * below the recycle threshold. Returns the reason to dispose it, if any.
   */
  async healthProblem(): Promise<string | undefined> {
    if (this.isDisposed) return "disposed";
    let timer: NodeJS.Timeout | undefined;
    const stats = this.isolate.getHeapStatistics();
    stats.catch(() => {});
    const result = await Promise.race([
      stats,
      new Promise<"busy">((resolve) => {
        timer = setTimeout(() => resolve("busy"), this.limits.healthCheckMs);
      }),
    ]).catch(() => "gone" as const);
    clearTimeout(timer);
    if (result === "busy") return "still running after its call";
    if (result === "gone") return "disposed";
    if (result.used_heap_size + result.externally_allocated_size > this.limits.recycleAfterHeapBytes)
      return "heap";
    return undefined;
  }

  /** Disposes the isolate (idempotent). */
  dispose(reason: string): void {
    if (this.gone) return;
    this.gone = true;
    this.current?.abort.abort();
    if (!this.catastrophic && !this.isolate.isDisposed) {
      this.cpuNsAtDispose = this.cpuNs();
      try {
        this.isolate.dispose();
      } catch {
        // already disposed by isolated-vm (memory limit)
      }
    }
    this.owner.onWorkerGone(this, reason);
  }

  // ---- host side of the bridge ------------------------------------------------------------

  /** A request of an async host function (or timer); answered through `deliver` while its call runs. */
  private onRequest(id: number, name: string, argsJson: string): void {
    const call = this.current;
    if (!call || typeof id !== "number") return;
    let answer: Promise<string>;
    try {
      answer = this.invokeHost(call, name, argsJson, false);
    } catch (e) {
      answer = Promise.resolve(this.hostFailure(name, e));
    }
    void answer
      .catch((e: unknown) => this.hostFailure(name, e))
      .then((text) => {
        if (this.current !== call || call.abort.signal.aborted || this.isDisposed || !this.deliverRef) return;
        try {
          this.deliverRef.applyIgnored(undefined, [id, text], { arguments: { copy: true } });
        } catch {
          // the isolate went away meanwhile
        }
      });
  }

  private dispatchSync(name: string, argsJson: string): string {
    const call = this.current;
    if (!call) return `E${JSON.stringify({ message: "Host functions are only available during a call" })}`;
    try {
      const answer = this.invokeHost(call, name, argsJson, true);
      if (typeof answer !== "string")
        throw new Error(`host function ${name} returned a promise but is declared sync`);
      return answer;
    } catch (e) {
      return this.hostFailure(name, e);
    }
  }

  private invokeHost(call: ActiveCall, name: string, argsJson: string, sync: true): string;
  private invokeHost(call: ActiveCall, name: string, argsJson: string, sync: false): Promise<string>;
  private invokeHost(
    call: ActiveCall,
    name: string,
    argsJson: string,
    sync: boolean,
  ): string | Promise<string> {
    if (typeof name !== "string" || typeof argsJson !== "string") throw new SandboxHostError("Bad host call");
    if (argsJson.length > this.limits.maxHostArgumentBytes) {
      throw new SandboxHostError(
        `Arguments to ${name} are larger than ${this.limits.maxHostArgumentBytes} bytes`,
      );
    }
    const args = JSON.parse(argsJson) as unknown;
    if (!Array.isArray(args)) throw new SandboxHostError("Bad host call");
    if (name === "$timer" && !sync) return this.timer(call, args[0]);
    const spec = this.owner.lookupHostFunction(name);
    if (!spec || spec.sync !== sync) throw new SandboxHostError(`${name} is not available`);
    const info: HostCallInfo = {
      programKey: this.owner.key,
      context: call.context,
      signal: call.abort.signal,
      deadline: call.deadline,
      callState: call.callState,
    };
    const result = spec.fn(args, info);
    if (sync) {
      if (result instanceof Promise) {
        result.catch(() => {});
        throw new Error(`host function ${name} returned a promise but is declared sync`);
      }
      return this.encodeHostResult(name, result);
    }
    return Promise.resolve(result).then((value) => this.encodeHostResult(name, value));
  }

  private async timer(call: ActiveCall, requested: unknown): Promise<string> {
    if (++call.timers > this.limits.maxTimersPerCall) {
      throw new SandboxHostError(`setTimeout: more than ${this.limits.maxTimersPerCall} timers in one call`);
    }
    // Capped, and cancelled with the call (a timer never fires after its call ended).
    const delay = Math.min(Math.max(0, Number(requested) || 0), this.limits.maxTimerDelayMs);
    await sleep(delay, call.abort.signal);
    return UNDEFINED_ANSWER;
  }

  private encodeHostResult(name: string, value: unknown): string {
    return hostValueAnswer(name, value, this.limits.maxResultBytes);
  }

  private hostFailure(name: string, e: unknown): string {
    return hostFailureAnswer(name, e, this.owner.logger, this.owner.key);
  }

  private consoleLine(level: string, text: string): void {
    const call = this.current;
    if (!call || ++call.consoleLines > this.limits.maxConsoleLines) return;
    const line = { programKey: this.owner.key, source: "sandbox console", level: safeText(level, 10) };
    // Debug level: user code may print credentials it was given; production logs run at info.
    this.owner.logger.debug(line, safeText(text, 1000));
  }
}
