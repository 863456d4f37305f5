/**
 * Entry of a sandbox host process, started by the data service
 * (`ProcessSandboxPool`, with `--no-node-snapshot`) with its options as the
 * one argument. It holds no credentials and no store connections: only the
 * isolates and the messages of protocol.ts.
 */
import { readdirSync } from "node:fs";
import os from "node:os";
import type { FromHostProcess, HostProcessOptions, ToHostProcess } from "./protocol.ts";
import { SandboxHost } from "./sandbox-host.ts";

const options = JSON.parse(process.argv[2] ?? "{}") as HostProcessOptions;

/**
 * Customer JavaScript yields the CPU to the service's own work: this process
 * and every thread it has runs at `niceness` (the isolates' threads, started
 * later from the main thread, inherit it). On Linux each thread has its own.
 */
function lowerPriority(niceness: number): void {
  if (niceness <= 0) return;
  let threads: number[] = [0];
  try {
    threads = readdirSync("/proc/self/task").map(Number);
  } catch {
    // not Linux: the process's own priority is all there is
  }
  for (const thread of threads) {
    try {
      os.setPriority(thread, niceness);
    } catch {
      // not permitted here: the process keeps its priority
    }
  }
}

lowerPriority(options.niceness ?? 0);

function send(message: FromHostProcess): void {
  // The data service may be gone; "disconnect" below ends this process then.
  if (process.connected) process.send?.(message, undefined, undefined, () => {});
}

const host = new SandboxHost(options, send);
process.on("message", (message) => host.handle(message as ToHostProcess));
// The data service decides when this process ends. A Ctrl-C or SIGTERM sent to
// the whole process group reaches it too, and must not fail the calls the
// service is still draining.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => {});
// Without the data service there is nothing left to do. process.exit() could
// wait forever for an isolate thread parked by a catastrophic error: kill.
process.on("disconnect", () => process.kill(process.pid, "SIGKILL"));
send({ t: "ready" });
