/**
 * The inside of a sandbox host process: an `IsolatePool` that runs the calls
 * the data service sends (protocol.ts) and answers each with one message.
 * Programs arrive with their first call; their host functions are stubs that
 * ask the data service, which runs the real ones.
 */

import { UNDEFINED_ANSWER } from "./answers.ts";
import { SandboxError, SandboxHostError } from "./errors.ts";
import { hostAnswerValue } from "./host-answers.ts";
import { IsolatePool, type IsolateProgram } from "./pool.ts";
import type { FromHostProcess, HostProcessOptions, ProgramRegistration, ToHostProcess } from "./protocol.ts";
import { toWireError } from "./protocol.ts";
import type { HostFunction, SandboxLogger, SandboxStats } from "./types.ts";

type Send = (message: FromHostProcess) => void;

const STATS_EVERY_MS = 1000;

function forwardingLogger(send: Send, debug: boolean): SandboxLogger {
  const at =
    (level: "debug" | "info" | "warn" | "error") =>
    (obj: object, msg?: string): void =>
      send({ t: "log", level, obj, msg });
  return { debug: debug ? at("debug") : () => {}, info: at("info"), warn: at("warn"), error: at("error") };
}

export class SandboxHost {
  private readonly pool: IsolatePool;
  private readonly send: Send;
  /** Programs by the data service's id, and the id registered for each key. */
  private readonly programs = new Map<number, IsolateProgram>();
  private readonly idByKey = new Map<string, number>();
  private readonly hostRequests = new Map<number, (answer: string) => void>();
  private hostSeq = 0;
  private reportedChanges = -1;

  constructor(options: HostProcessOptions, send: Send) {
    this.send = send;
    this.pool = new IsolatePool({
      ...options.limits,
      allowLoopbackFetch: false,
      logger: forwardingLogger(send, options.debugLog),
      onCatastrophicError: () => send({ t: "catastrophic" }),
    });
    // Isolates also go away between calls (idle, recycled): report that now and then.
    setInterval(() => {
      const stats = this.statsIfChanged();
      if (stats) send({ t: "stats", stats });
    }, STATS_EVERY_MS).unref();
  }

  handle(message: ToHostProcess): void {
    switch (message.t) {
      case "call":
        void this.call(message);
        break;
      case "hostAnswer":
        this.hostRequests.get(message.id)?.(message.answer);
        break;
      case "drop":
        this.pool.drop(message.key);
        this.forget(message.key);
        break;
    }
  }

  private async call(message: Extract<ToHostProcess, { t: "call" }>): Promise<void> {
    const { id, deadline } = message;
    let program = this.programs.get(message.program);
    if (!program && message.register) program = this.register(message.program, message.register);
    if (!program) {
      const error = new SandboxError("unavailable", "The sandbox process does not know this program");
      this.send({ t: "done", id, error: toWireError(error), unregistered: true });
      return;
    }
    let cpuMs: number | undefined;
    const onCpuTime = (ms: number) => {
      cpuMs = ms;
    };
    try {
      let answer = UNDEFINED_ANSWER;
      if (message.mode === "warm") await program.warm(Math.max(1, deadline - Date.now()));
      else {
        const request = { mode: message.mode, target: message.target, payload: message.payload };
        answer = await program.runRequest(request, deadline, id, onCpuTime);
      }
      this.send({ t: "done", id, answer, cpuMs, stats: this.statsIfChanged() });
    } catch (e) {
      this.send({ t: "done", id, error: toWireError(e), cpuMs, stats: this.statsIfChanged() });
    }
  }

  private register(id: number, registration: ProgramRegistration): IsolateProgram {
    const forward: (path: string) => HostFunction = (path) => (args, info) =>
      this.askHost(info.context as number, path, args, info.signal);
    const hostFunctions = Object.fromEntries(registration.hostFunctions.map((path) => [path, forward(path)]));
    const program = this.pool.program(registration.key, registration.sources, { hostFunctions });
    this.forget(registration.key);
    this.programs.set(id, program);
    this.idByKey.set(registration.key, id);
    return program;
  }

  private forget(key: string): void {
    const id = this.idByKey.get(key);
    if (id === undefined) return;
    this.idByKey.delete(key);
    this.programs.delete(id);
  }

  /** Runs a host function in the data service, for the call `callId`, while that call runs. */
  private askHost(callId: number, path: string, args: unknown[], signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new SandboxHostError("The call is over"));
      const id = ++this.hostSeq;
      const onAbort = () => {
        this.hostRequests.delete(id);
        reject(new SandboxHostError("The call is over"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.hostRequests.set(id, (answer) => {
        signal.removeEventListener("abort", onAbort);
        this.hostRequests.delete(id);
        try {
          resolve(hostAnswerValue(answer));
        } catch (e) {
          reject(e);
        }
      });
      this.send({ t: "host", id, call: callId, path, args });
    });
  }

  private statsIfChanged(): SandboxStats | undefined {
    if (this.pool.changeCount === this.reportedChanges) return undefined;
    this.reportedChanges = this.pool.changeCount;
    return this.pool.stats();
  }
}
