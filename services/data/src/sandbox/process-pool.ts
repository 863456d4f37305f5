/**
 * The sandbox of the data service: isolates run in sandbox host processes
 * (child processes of the service, `processes` of them), each an `IsolatePool`
 * behind the messages of protocol.ts. Programs are spread over the processes
 * by key, so all isolates of one program live in one process.
 *
 * Why processes: an isolate that has a catastrophic error (typically a heap
 * that can no longer be collected below its limit) keeps its thread and its
 * memory for as long as its process lives, and that process cannot even exit
 * normally. Here the call fails at once ("memory"), the process takes no new
 * calls, calls of other programs already running in it may finish within
 * their own deadlines, then it is killed and a fresh process serves later
 * calls (programs are registered again in it with their first call). An
 * unexpected exit fails the process's calls at once ("crashed") the same way.
 *
 * Async host functions run here, in the service; only their arguments and
 * answers cross to the process. Sync host functions cannot (the isolate would
 * block on a round trip): use `IsolatePool` for those.
 */
import { SandboxError } from "./errors.ts";
import { clampTimeout, type Limits, normaliseLimits, type SandboxPoolOptions } from "./limits.ts";
import type { HostProcessOptions } from "./protocol.ts";
import { ProgramBase, type ProgramSpec, RegistryPool } from "./registry.ts";
import { callError, decodeAnswer, type Request } from "./requests.ts";
import { type ProcessRequest, type RestartReason, SandboxProcess } from "./sandbox-process.ts";
import {
  type CallOptions,
  type HostFunctions,
  type SandboxLogger,
  type SandboxPool,
  type SandboxStats,
  silentLogger,
} from "./types.ts";

export type { RestartReason } from "./sandbox-process.ts";

export interface ProcessSandboxPoolOptions extends SandboxPoolOptions {
  /** Sandbox host processes; programs are spread over them by key. Default 2. */
  processes?: number;
  /** Told each time a sandbox process is replaced, and why. */
  onProcessRestart?: (reason: RestartReason) => void;
  /** Nice value (0–19) of the sandbox processes: their code yields the CPU to the service's. Default 0 (the service's own); the service sets SANDBOX_NICENESS. */
  niceness?: number;
}

/** A request, or "warm" (start an isolate of the program). */
type ProcessRequestBody = Pick<ProcessRequest, "mode" | "target" | "payload">;

/** A program of a `ProcessSandboxPool`. Get one from `ProcessSandboxPool.program`. */
class ProcessProgram extends ProgramBase {
  readonly id: number;
  readonly hostFunctionPaths: string[];
  private readonly pool: ProcessSandboxPool;

  constructor(pool: ProcessSandboxPool, id: number, spec: ProgramSpec) {
    super(spec);
    this.pool = pool;
    this.id = id;
    this.hostFunctionPaths = [...spec.hostFns.keys()];
  }

  protected get maxArgumentBytes(): number {
    return this.pool.limits.maxArgumentBytes;
  }

  protected execute(request: Request, options: CallOptions): Promise<unknown> {
    return this.pool.dispatch(this, request, options);
  }

  async warm(timeoutMs?: number): Promise<void> {
    const request = { mode: "warm" as const, target: "", payload: "" };
    await this.pool.dispatch(this, request, { timeoutMs: timeoutMs ?? this.pool.limits.loadTimeoutMs });
  }
}

/** FNV-1a: a key's process, stable for the pool's lifetime. */
function slotOf(key: string, slots: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % slots;
}

function addCounts(into: Record<string, number>, from: Record<string, number> | undefined): void {
  for (const [k, v] of Object.entries(from ?? {})) into[k] = (into[k] ?? 0) + v;
}

export class ProcessSandboxPool extends RegistryPool<ProcessProgram> implements SandboxPool {
  readonly allowLoopbackFetch: boolean;
  /** @internal */ readonly limits: Limits;
  private readonly logger: SandboxLogger;
  private readonly onCall: (outcome: string) => void;
  private readonly onProcessRestart: (reason: RestartReason) => void;
  private readonly hostOptions: HostProcessOptions;
  /** The process serving each slot now (none after a failed start, until a call needs one). */
  private readonly slots: (SandboxProcess | undefined)[];
  /** Processes that take no new calls and are killed once their calls are over. */
  private readonly retiring = new Set<SandboxProcess>();
  private readonly restarts: Record<string, number> = {};
  /** Counts of processes that are gone. */
  private readonly ended = { disposed: {} as Record<string, number>, catastrophicErrors: 0 };
  private programSeq = 0;
  private closed = false;

  constructor(options: ProcessSandboxPoolOptions) {
    super();
    this.limits = normaliseLimits(options);
    this.allowLoopbackFetch = options.allowLoopbackFetch;
    this.logger = options.logger ?? silentLogger;
    this.onCall = options.onCall ?? (() => {});
    this.onProcessRestart = options.onProcessRestart ?? (() => {});
    const isLevelEnabled = (this.logger as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
    this.hostOptions = {
      limits: this.limits,
      debugLog: isLevelEnabled ? isLevelEnabled.call(this.logger, "debug") : true,
      niceness: Math.min(19, Math.max(0, Math.floor(options.niceness ?? 0))),
    };
    this.slots = Array.from({ length: Math.max(1, Math.floor(options.processes ?? 2)) }, (_, slot) =>
      this.start(slot),
    );
  }

  protected createProgram(spec: ProgramSpec): ProcessProgram {
    return new ProcessProgram(this, ++this.programSeq, spec);
  }

  protected override checkHostFunctions(hostFunctions: HostFunctions): void {
    for (const [path, spec] of Object.entries(hostFunctions)) {
      if (typeof spec === "object" && spec?.sync === true) {
        throw new TypeError(`Host function ${path} is sync: only the in-process IsolatePool runs those`);
      }
    }
  }

  /** A retired or dropped program: its process forgets it (its idle isolates go at once). */
  protected forgetProgram(program: ProcessProgram): void {
    for (const p of this.liveProcesses()) {
      if (p.has(program.key, program.id)) p.drop(program.key);
    }
  }

  /** Counts of the processes as of their last report (sent with answers, and every second when they change). */
  stats(): SandboxStats {
    const live = this.liveProcesses();
    const disposed = { ...this.ended.disposed };
    let isolates = 0;
    let idle = 0;
    let queued = 0;
    let busy = 0;
    let catastrophicErrors = this.ended.catastrophicErrors;
    for (const p of live) {
      isolates += p.stats?.isolates ?? 0;
      idle += p.stats?.idle ?? 0;
      queued += p.stats?.queued ?? 0;
      busy += p.callCount;
      catastrophicErrors += p.stats?.catastrophicErrors ?? 0;
      addCounts(disposed, p.stats?.disposed);
    }
    return {
      programs: this.programCount,
      isolates,
      busy,
      idle,
      queued,
      disposed,
      catastrophicErrors,
      processes: { running: live.length, retiring: this.retiring.size, restarts: { ...this.restarts } },
    };
  }

  /** Settles once every sandbox process has started (or failed to): the first calls need not wait for one. */
  async ready(): Promise<void> {
    await Promise.all(this.liveProcesses().map((p) => p.ready));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Kills every sandbox process; pending and later calls fail with SandboxError("unavailable"). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.forgetAllPrograms();
    const live = this.liveProcesses();
    this.slots.fill(undefined);
    await Promise.all(live.map((p) => p.close()));
  }

  // ---- internals ------------------------------------------------------------------------------

  /** @internal One call of `program` in its process. */
  async dispatch(
    program: ProcessProgram,
    request: ProcessRequestBody,
    options: CallOptions,
  ): Promise<unknown> {
    const warm = request.mode === "warm";
    const timeoutMs = clampTimeout(
      this.limits,
      options.timeoutMs ?? (warm ? this.limits.loadTimeoutMs : this.limits.timeoutMs),
    );
    try {
      const answer = await this.send(program, request, timeoutMs, options);
      if (warm) return undefined;
      const value = decodeAnswer(answer, this.limits.maxResultBytes, program.key);
      this.onCall("ok");
      return value;
    } catch (e) {
      if (!warm) this.onCall(e instanceof SandboxError ? e.kind : "error");
      throw callError(e, timeoutMs, program.key);
    }
  }

  private send(
    program: ProcessProgram,
    request: ProcessRequestBody,
    timeoutMs: number,
    { context, onCpuTime }: CallOptions,
  ): Promise<string> {
    const programKey = program.key;
    if (this.closed) {
      return Promise.reject(new SandboxError("unavailable", "The sandbox is shut down", { programKey }));
    }
    const slot = slotOf(programKey, this.slots.length);
    const host = this.slots[slot] ?? this.start(slot);
    this.slots[slot] = host;
    const registration = {
      key: programKey,
      sources: program.sources,
      hostFunctions: program.hostFunctionPaths,
    };
    return new Promise<string>((resolve, reject) => {
      host.run(
        {
          programKey,
          hostFunction: (path) => program.lookupHostFunction(path)?.fn,
          context,
          deadline: Date.now() + timeoutMs,
          timeoutMs,
          onCpuTime,
          resolve,
          reject,
        },
        { program: program.id, registration, ...request },
      );
    });
  }

  private start(slot: number): SandboxProcess {
    return new SandboxProcess(slot, this.hostOptions, {
      logger: this.logger,
      maxResultBytes: this.limits.maxResultBytes,
      onTrouble: (host, reason) => this.replace(host, reason),
      onExit: (host) => this.gone(host),
    });
  }

  /** Takes `host` out of service (a fresh process takes its slot) and retires it. */
  private replace(host: SandboxProcess, reason: RestartReason): void {
    this.restarts[reason] = (this.restarts[reason] ?? 0) + 1;
    this.onProcessRestart(reason);
    this.logger.warn({ slot: host.slot, reason }, "sandbox process replaced");
    if (this.slots[host.slot] === host) {
      // One that never started is replaced by the next call that needs it (no start-up loop).
      this.slots[host.slot] = host.started && !this.closed ? this.start(host.slot) : undefined;
    }
    this.retiring.add(host);
    host.retire();
    // Bounded however often it happens: past as many retiring processes as slots, the oldest are killed now.
    const alive = [...this.retiring].filter((p) => !p.isKilled);
    for (const p of alive.slice(0, Math.max(0, alive.length - this.slots.length))) p.kill();
  }

  /** Forgets a process that has exited, keeping its counts in the totals. */
  private gone(host: SandboxProcess): void {
    this.retiring.delete(host);
    if (this.slots[host.slot] === host) this.slots[host.slot] = undefined;
    const stats = host.stats;
    if (!stats) return;
    addCounts(this.ended.disposed, stats.disposed);
    addCounts(this.ended.disposed, stats.isolates > 0 ? { "process ended": stats.isolates } : {});
    this.ended.catastrophicErrors += stats.catastrophicErrors;
  }

  private liveProcesses(): SandboxProcess[] {
    const live = new Set<SandboxProcess>(this.retiring);
    for (const p of this.slots) if (p) live.add(p);
    return [...live];
  }
}
