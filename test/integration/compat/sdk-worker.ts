/**
 * Runs the Node SDK (caliveapicreator) in a process of its own, driven over IPC
 * by node-sdk.test.ts. It must not be loaded into the test process: its module
 * assigns the global `URL` (a missing `var`), which replaces the WHATWG URL class
 * with Node's `url` module for everything else in that process.
 *
 * Messages in: {id, op: "connect", args} | {id, op: "call", handle, endpoint, method, args}.
 * Messages out: {id, ok: true, value} | {id, ok: false, reason}.
 */
import { createRequire } from "node:module";

interface Connection {
  apiKey: string | undefined;
  connection: PromiseLike<void>;
  endpoint(pathOrHref: string): Record<string, (...args: unknown[]) => PromiseLike<unknown>>;
}

const sdk = createRequire(import.meta.url)("caliveapicreator") as {
  connect(...args: string[]): Connection;
};
const connections = new Map<number, Connection>();

type Message =
  | { id: number; op: "connect"; args: string[] }
  | { id: number; op: "call"; handle: number; endpoint: string; method: string; args: unknown[] };

function reply(message: object): void {
  process.send?.(message);
}

process.on("message", async (message: Message) => {
  try {
    if (message.op === "connect") {
      const connection = sdk.connect(...message.args);
      await connection.connection;
      connections.set(message.id, connection);
      reply({ id: message.id, ok: true, value: { handle: message.id, apiKey: connection.apiKey ?? null } });
      return;
    }
    const connection = connections.get(message.handle);
    if (!connection) throw new Error(`no connection ${message.handle}`);
    const value = await connection.endpoint(message.endpoint)[message.method]!(...message.args);
    reply({ id: message.id, ok: true, value });
  } catch (reason) {
    reply({
      id: message.id,
      ok: false,
      reason: reason instanceof Error ? { error: reason.message } : reason,
    });
  }
});
process.on("disconnect", () => process.exit(0));
