/**
 * The data service's side of one sandbox host process: starts it, sends it
 * calls, runs the host functions it asks for (with the call's HostCallInfo,
 * which never leaves the data service), and settles every call exactly once:
 * with the process's answer, or when the process dies, or at the call's
 * deadline plus a grace period when the process does not answer.
 *
 * A process in trouble (catastrophic error, unexpected exit, an unanswered
 * call) is reported to the pool, which retires it: it takes no new calls, its
 * calls still running may finish, then it is killed. SIGKILL, always: after a
 * catastrophic error the process cannot exit by itself.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { safeText } from "../../../../shared/safe-text.ts";
import { UNDEFINED_ANSWER } from "./answers.ts";
import { SandboxError, SandboxHostError, SandboxTimeoutError } from "./errors.ts";
import { hostFailureAnswer, hostValueAnswer } from "./host-answers.ts";
import {
  type CallMode,
  type FromHostProcess,
  fromWireError,
  type HostProcessOptions,
  type ProgramRegistration,
  type ToHostProcess,
} from "./protocol.ts";
import type { HostCallInfo, HostFunction, SandboxLogger, SandboxStats } from "./types.ts";

const ENTRY = fileURLToPath(new URL("./host-process.ts", import.meta.url));
/** How long past a call's deadline the process may take to answer before it counts as unresponsive. */
const ANSWER_GRACE_MS = 1000;
/** A process not ready by then is given up (its calls fail at their own deadlines meanwhile). */
const START_TIMEOUT_MS = 15_000;
/** How long `close` waits for a killed process to be reaped. */
const EXIT_WAIT_MS = 5000;
const LOG_LEVELS = new Set(["debug", "info", "warn", "error"]);

export type RestartReason = "catastrophic" | "crashed" | "unresponsive";

export interface ProcessCall {
  programKey: string;
  hostFunction(path: string): HostFunction | undefined;
  context: unknown;
  deadline: number;
  timeoutMs: number;
  /** Told the CPU time (ms) the call spent in its isolate, when the process reports it. */
  onCpuTime?: (ms: number) => void;
  resolve(answer: string): void;
  reject(error: SandboxError): void;
}

export interface ProcessRequest {
  program: number;
  /** Sent with the program's first call in this process (and again should the process not know it). */
  registration: ProgramRegistration;
  mode: CallMode;
  target: string;
  payload: string;
}

export interface ProcessHooks {
  logger: SandboxLogger;
  /** Largest host-function answer (JSON bytes) handed back to the process. */
  maxResultBytes: number;
  /** Once per process, when it must not take new calls any more. */
  onTrouble(process: SandboxProcess, reason: RestartReason): void;
  /** The process has exited; its calls are settled. */
  onExit(process: SandboxProcess): void;
}

interface ActiveCall {
  call: ProcessCall;
  request: ProcessRequest;
  /** Sent again with its program's registration (once). */
  resent: boolean;
  abort: AbortController;
  callState: Map<string, unknown>;
  timer: NodeJS.Timeout;
}

/** The environment of a sandbox process: none of the service's (no credentials), only locale and time zone. */
function sandboxEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ["TZ", "LANG", "LC_ALL"]) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  return env;
}

export class SandboxProcess {
  readonly slot: number;
  /** Program id registered in the process, by key (mirrors the process's own table). */
  private readonly registered = new Map<string, number>();
  /** The process's own counts, as of its last report. */
  stats: SandboxStats | undefined;
  private readonly hooks: ProcessHooks;
  private readonly child: ChildProcess;
  private readonly calls = new Map<number, ActiveCall>();
  private readonly exited: Promise<void>;
  /** Settles once the process has started, or is gone. */
  readonly ready: Promise<void>;
  private markReady: () => void = () => {};
  /** Messages waiting for the process to start. */
  private queue: ToHostProcess[] | undefined = [];
  private readyReceived = false;
  private callSeq = 0;
  private retiring = false;
  private troubled = false;
  private killed = false;
  private gone = false;
  private closing = false;

  constructor(slot: number, options: HostProcessOptions, hooks: ProcessHooks) {
    this.slot = slot;
    this.hooks = hooks;
    this.child = fork(ENTRY, [JSON.stringify(options)], {
      execArgv: ["--no-node-snapshot"],
      env: sandboxEnv(),
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      serialization: "advanced",
    });
    // Only V8 and Node write there (e.g. the heap report of a catastrophic error): into the log, as JSON.
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (text: string) =>
      hooks.logger.warn({ slot, stderr: safeText(text.trim(), 2000) }, "sandbox process wrote to stderr"),
    );
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code, signal) => {
        this.onExit(signal ?? `exit code ${code}`);
        resolve();
      });
      this.child.once("error", (err) => {
        // Only a process that never started is over here; other errors (a failed kill or send) change nothing.
        if (this.child.pid !== undefined) return;
        hooks.logger.error({ err: err.message }, "sandbox process could not start");
        this.onExit("not started");
        resolve();
      });
    });
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    void this.exited.then(() => this.markReady());
    this.child.on("message", (message) => this.onMessage(message as FromHostProcess));
    const startTimer = setTimeout(() => {
      if (this.started || this.gone) return;
      hooks.logger.error({ slot, ms: START_TIMEOUT_MS }, "sandbox process did not start in time");
      this.trouble("unresponsive");
    }, START_TIMEOUT_MS);
    startTimer.unref();
    void this.exited.then(() => clearTimeout(startTimer));
    (this.child.stderr as { unref?: () => void } | null)?.unref?.();
  }

  /** Calls keep the service's event loop alive with their timers; a started, idle process does not. */
  private unref(): void {
    this.child.unref();
    this.child.channel?.unref();
  }

  /** True once it has answered its start-up: a process that fails before that is not restarted eagerly. */
  get started(): boolean {
    return this.readyReceived;
  }

  get isKilled(): boolean {
    return this.killed || this.gone;
  }

  get callCount(): number {
    return this.calls.size;
  }

  run(call: ProcessCall, request: ProcessRequest): void {
    if (this.gone) {
      call.reject(
        new SandboxError("crashed", "The sandbox process stopped", { programKey: call.programKey }),
      );
      return;
    }
    const id = ++this.callSeq;
    const timer = setTimeout(() => this.deadlinePassed(id), call.deadline - Date.now());
    this.calls.set(id, {
      call,
      request,
      resent: false,
      abort: new AbortController(),
      callState: new Map(),
      timer,
    });
    this.sendCall(id, request, this.registered.get(request.registration.key) !== request.program);
  }

  /** True when the process knows `program` as the current program of its key. */
  has(key: string, program: number): boolean {
    return this.registered.get(key) === program;
  }

  /** Tells the process to forget a program (its idle isolates go at once). */
  drop(key: string): void {
    if (!this.registered.delete(key) || this.gone) return;
    this.send({ t: "drop", key });
  }

  /** No new calls; killed once the calls it is running are over. */
  retire(): void {
    if (this.retiring || this.gone) return;
    this.retiring = true;
    if (this.calls.size === 0) this.kill();
  }

  kill(): void {
    if (this.killed || this.gone) return;
    this.killed = true;
    this.child.ref();
    this.child.kill("SIGKILL");
  }

  /** Fails every call as "unavailable", kills the process and waits until it is gone. */
  async close(): Promise<void> {
    this.closing = true;
    this.retiring = true;
    this.kill();
    this.failAll(() => new SandboxError("unavailable", "The sandbox is shut down"));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exited, new Promise((resolve) => (timer = setTimeout(resolve, EXIT_WAIT_MS)))]);
    clearTimeout(timer);
  }

  // ---- internals ------------------------------------------------------------------------------

  private sendCall(id: number, request: ProcessRequest, register: boolean): void {
    const { program, registration, mode, target, payload } = request;
    this.registered.set(registration.key, program);
    const deadline = this.calls.get(id)?.call.deadline ?? Date.now();
    this.send({
      t: "call",
      id,
      deadline,
      program,
      register: register ? registration : undefined,
      mode,
      target,
      payload,
    });
  }

  private send(message: ToHostProcess): void {
    if (this.queue) {
      this.queue.push(message);
      return;
    }
    // A failed send means the process is going away: its "exit" settles the calls.
    if (this.child.connected) this.child.send(message, undefined, undefined, () => {});
  }

  private onMessage(message: FromHostProcess): void {
    switch (message.t) {
      case "ready": {
        const queued = this.queue ?? [];
        this.queue = undefined;
        this.readyReceived = true;
        this.unref();
        for (const m of queued) this.send(m);
        this.markReady();
        break;
      }
      case "done": {
        if (message.stats) this.stats = message.stats;
        const active = this.calls.get(message.id);
        if (!active) break;
        if (message.unregistered && !active.resent) {
          active.resent = true;
          this.sendCall(message.id, active.request, true);
          break;
        }
        if (typeof message.cpuMs === "number") active.call.onCpuTime?.(message.cpuMs);
        if (message.error) this.finish(message.id, fromWireError(message.error, active.call.programKey));
        else this.finish(message.id, message.answer ?? UNDEFINED_ANSWER);
        break;
      }
      case "host":
        void this.runHostFunction(message);
        break;
      case "log":
        if (LOG_LEVELS.has(message.level)) this.hooks.logger[message.level](message.obj, message.msg);
        break;
      case "catastrophic":
        this.trouble("catastrophic");
        break;
      case "stats":
        this.stats = message.stats;
        break;
    }
  }

  private finish(id: number, outcome: string | SandboxError): void {
    const active = this.calls.get(id);
    if (!active) return;
    this.calls.delete(id);
    clearTimeout(active.timer);
    active.abort.abort();
    if (typeof outcome === "string") active.call.resolve(outcome);
    else active.call.reject(outcome);
    if (this.retiring && this.calls.size === 0) this.kill();
  }

  private failAll(error: (call: ProcessCall) => SandboxError): void {
    for (const [id, active] of [...this.calls]) this.finish(id, error(active.call));
  }

  /**
   * A call's deadline has passed. Still waiting for the process to start: it
   * fails now (the process is not to blame). Sent: the process enforces the
   * deadline itself, so its answer is due; without one within the grace
   * period, the call fails and the process is no longer trusted.
   */
  private deadlinePassed(id: number): void {
    const active = this.calls.get(id);
    if (!active) return;
    if (this.queue) {
      this.queue = this.queue.filter((m) => !(m.t === "call" && m.id === id));
      this.finish(id, this.timeoutError(active.call));
      return;
    }
    active.timer = setTimeout(() => {
      if (this.calls.get(id) !== active) return;
      this.finish(id, this.timeoutError(active.call));
      this.trouble("unresponsive");
    }, ANSWER_GRACE_MS);
  }

  private timeoutError({ timeoutMs, programKey }: ProcessCall): SandboxTimeoutError {
    return new SandboxTimeoutError(timeoutMs, `The call did not finish within ${timeoutMs} ms`, {
      programKey,
    });
  }

  private trouble(reason: RestartReason): void {
    if (this.troubled || this.closing) return;
    this.troubled = true;
    this.hooks.onTrouble(this, reason);
  }

  private onExit(how: string): void {
    if (this.gone) return;
    this.gone = true;
    this.queue = undefined;
    if (!this.killed) {
      this.hooks.logger.error({ slot: this.slot, how }, "sandbox process exited unexpectedly");
      this.trouble("crashed");
    }
    this.failAll(
      (call) =>
        new SandboxError("crashed", `The sandbox process stopped (${how}) during the call`, {
          programKey: call.programKey,
        }),
    );
    this.hooks.onExit(this);
  }

  private async runHostFunction(message: Extract<FromHostProcess, { t: "host" }>): Promise<void> {
    const active = this.calls.get(message.call);
    if (!active) return;
    const programKey = active.call.programKey;
    let answer: string;
    try {
      const fn = active.call.hostFunction(message.path);
      if (!fn) throw new SandboxHostError(`${message.path} is not available`);
      const info: HostCallInfo = {
        programKey,
        context: active.call.context,
        signal: active.abort.signal,
        deadline: active.call.deadline,
        callState: active.callState,
      };
      answer = hostValueAnswer(message.path, await fn(message.args, info), this.hooks.maxResultBytes);
    } catch (e) {
      answer = hostFailureAnswer(message.path, e, this.hooks.logger, programKey);
    }
    // Answers reach the process only while their call runs (it drops later ones anyway).
    if (this.calls.get(message.call) === active) this.send({ t: "hostAnswer", id: message.id, answer });
  }
}
