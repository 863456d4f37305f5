/**
 * Acknowledgement from a replica for steps a failover must not lose (single server and Sentinel
 * topologies): Redis replicates asynchronously, so what the primary acknowledged but had not yet
 * sent to a replica is gone when that replica is promoted. `confirm()` resolves once a replica has
 * everything this process wrote before the call.
 *
 * How: one write of a scratch key and `WAIT 1 <timeoutMs>` on a connection of its own. The
 * replication offset is the server's, so a replica that acknowledged the scratch write has every
 * command the server ran before it — those of the process's other connections included. A round
 * serves every caller that arrived before it was sent (group commit): while one is out, new callers
 * wait for the next. WAIT blocks only this connection; the command client's traffic goes on.
 * A primary without replicas (ROLE, asked at most once per `roleRefreshMs`) costs nothing.
 */
import type { Redis } from "ioredis";

export class ReplicaAcks {
  readonly #connection: Redis;
  readonly #scratchKey: string;
  readonly #timeoutMs: number;
  readonly #roleRefreshMs: number;
  readonly #now: () => number;
  #replicas: { count: number; at: number } | undefined;
  #inFlight: Promise<boolean> | undefined;
  #queued: Promise<boolean> | undefined;
  #round = 0;

  constructor(
    connection: Redis,
    scratchKey: string,
    timeoutMs: number,
    options: { roleRefreshMs?: number; now?: () => number } = {},
  ) {
    this.#connection = connection;
    this.#scratchKey = scratchKey;
    this.#timeoutMs = timeoutMs;
    this.#roleRefreshMs = options.roleRefreshMs ?? 1000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * True once a replica acknowledged everything written before the call (or the primary has no
   * replica); false when it has replicas and none acknowledged within the time. Rejects when the
   * server cannot be reached.
   */
  confirm(): Promise<boolean> {
    if (this.#queued) return this.#queued;
    const queued = (this.#inFlight ?? Promise.resolve(true))
      .catch(() => true)
      .then(() => {
        this.#queued = undefined;
        const round = this.#send();
        this.#inFlight = round;
        return round;
      });
    this.#queued = queued;
    return queued;
  }

  async #send(): Promise<boolean> {
    if ((await this.#replicaCount()) === 0) return true;
    const [, acknowledged] = await Promise.all([
      this.#connection.set(this.#scratchKey, String(++this.#round), "PX", 60_000),
      this.#connection.wait(1, this.#timeoutMs),
    ]);
    return acknowledged >= 1;
  }

  async #replicaCount(): Promise<number> {
    const known = this.#replicas;
    if (known && this.#now() - known.at < this.#roleRefreshMs) return known.count;
    const role = (await this.#connection.role()) as [string, number, unknown[]?];
    const count = role[0] === "master" ? (role[2]?.length ?? 0) : 0;
    this.#replicas = { count, at: this.#now() };
    return count;
  }
}
