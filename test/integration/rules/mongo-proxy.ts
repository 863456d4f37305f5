/**
 * A TCP proxy in front of the MongoDB (FerretDB) server for tests: it reads the
 * command name of every request that passes (MongoDB wire protocol, OP_MSG)
 * so a test can count round trips, and it can drop the connection that carries
 * a chosen write command (and refuse new connections for a while) to simulate
 * the store going away mid-request.
 */
import net from "node:net";

const OP_MSG = 2013;
const OP_QUERY = 2004;
const WRITES = new Set(["insert", "update", "delete", "findAndModify"]);

/** The command name (first key of the body) of one complete client message, if it can be read. */
function commandName(msg: Buffer): string | undefined {
  const opCode = msg.readInt32LE(12);
  let at: number;
  if (opCode === OP_MSG) {
    if (msg[20] !== 0) return undefined;
    at = 21;
  } else if (opCode === OP_QUERY) {
    at = 20;
    while (at < msg.length && msg[at] !== 0) at++; // full collection name
    at += 1 + 8; // NUL, numberToSkip, numberToReturn
  } else {
    return undefined;
  }
  const nameStart = at + 5; // int32 size, element type byte
  const end = msg.indexOf(0, nameStart);
  return end < 0 ? undefined : msg.toString("utf8", nameStart, end);
}

/** The target collection of a write command (the value of its first key). */
function commandTarget(msg: Buffer): string | undefined {
  const name = commandName(msg);
  if (!name) return undefined;
  const at = msg.indexOf(0, 26) + 1;
  const len = msg.readInt32LE(at);
  return msg.toString("utf8", at + 4, at + 4 + len - 1);
}

export interface WritePlanMatch {
  /** The matching write command (1-based, counted from arming) that triggers the action. */
  atWrite: number;
  /** Collections whose writes count (default: all but the sequences). */
  match?: (collection: string) => boolean;
}

export interface DropPlan extends WritePlanMatch {
  /** New connections are refused for this long after the drop (open ones, such as the driver's monitor, stay). */
  outageMs: number;
}

export interface HoldPlan extends WritePlanMatch {
  /** Runs while the write is held back (the connection's later messages wait too). */
  during: () => Promise<void>;
}

type Armed =
  | (DropPlan & { kind: "drop"; seen: number; resolve: () => void })
  | (HoldPlan & { kind: "hold"; seen: number; resolve: () => void });

export class MongoProxy {
  readonly #target: { host: string; port: number };
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  #recording: string[] | undefined;
  #armed: Armed | undefined;
  #refuseUntil = 0;
  dropped = 0;

  constructor(targetUrl: string) {
    const u = new URL(targetUrl);
    this.#target = { host: u.hostname, port: Number(u.port || 27017) };
    this.#server = net.createServer((client) => this.#accept(client));
  }

  listen(): Promise<number> {
    return new Promise((resolve) =>
      this.#server.listen(0, "127.0.0.1", () => resolve((this.#server.address() as net.AddressInfo).port)),
    );
  }

  /** Starts recording the command names of client requests (monitoring connections included). */
  record(): void {
    this.#recording = [];
  }

  /** Stops recording; returns the commands seen, in order. */
  stopRecording(): string[] {
    const out = this.#recording ?? [];
    this.#recording = undefined;
    return out;
  }

  /** Drops the connection of a write command before it reaches the server; resolves once that happened. */
  armDrop(plan: DropPlan): Promise<void> {
    return new Promise((resolve) => {
      this.#armed = { ...plan, kind: "drop", seen: 0, resolve };
    });
  }

  /** Holds a write command back while `plan.during` runs; resolves once it ran. */
  armHold(plan: HoldPlan): Promise<void> {
    return new Promise((resolve) => {
      this.#armed = { ...plan, kind: "hold", seen: 0, resolve };
    });
  }

  /** What to do with one client message: forward it, drop everything, or wait before forwarding. */
  #onMessage(msg: Buffer): "forward" | "drop" | Promise<void> {
    const name = commandName(msg);
    if (name && this.#recording) this.#recording.push(name);
    const armed = this.#armed;
    if (!name || !WRITES.has(name) || !armed) return "forward";
    const collection = commandTarget(msg) ?? "";
    const counts = armed.match ? armed.match(collection) : collection !== "tessera_sequences";
    if (!counts || ++armed.seen !== armed.atWrite) return "forward";
    this.#armed = undefined;
    if (armed.kind === "drop") {
      this.dropped++;
      this.#refuseUntil = Date.now() + armed.outageMs;
      armed.resolve();
      return "drop";
    }
    return armed.during().finally(() => armed.resolve());
  }

  #accept(client: net.Socket): void {
    if (Date.now() < this.#refuseUntil) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.#target);
    this.#sockets.add(client);
    this.#sockets.add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on("error", close).on("close", close);
    upstream.on("error", close).on("close", close);
    upstream.on("data", (chunk) => client.write(chunk));
    let pending = Buffer.alloc(0);
    let busy = false;
    const pump = async () => {
      if (busy) return;
      busy = true;
      try {
        while (pending.length >= 4) {
          const size = pending.readInt32LE(0);
          if (pending.length < size) break;
          const msg = pending.subarray(0, size);
          pending = pending.subarray(size);
          const action = this.#onMessage(msg);
          if (action === "drop") {
            close();
            return;
          }
          if (action !== "forward") await action.catch(() => {});
          // A held write whose client went away meanwhile (a killed process) never reaches the store.
          if (client.destroyed) return;
          upstream.write(msg);
        }
      } finally {
        busy = false;
      }
    };
    client.on("data", (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      void pump();
    });
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
