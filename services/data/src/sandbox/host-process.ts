/**
 * Entry of a sandbox host process, started by the data service
 * (`ProcessSandboxPool`, with `--no-node-snapshot`) with its options as the
 * one argument. It holds no credentials and no store connections: only the
 * isolates and the messages of protocol.ts.
 */
import type { FromHostProcess, HostProcessOptions, ToHostProcess } from "./protocol.ts";
import { SandboxHost } from "./sandbox-host.ts";

const options = JSON.parse(process.argv[2] ?? "{}") as HostProcessOptions;

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
