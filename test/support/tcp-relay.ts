/**
 * A TCP relay on loopback in front of a server, for fault tests: it can lose a
 * chosen answer (the server did the work, the client never hears of it) by
 * cutting the connection that carries it, and refuse new connections for a while.
 */
import net from "node:net";

export class TcpRelay {
  readonly #target: number;
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  #port = 0;
  #cut: { answersLeft: number; refuseMs: number; done: () => void } | undefined;
  #held = false;

  constructor(targetPort: number) {
    this.#target = targetPort;
    this.#server = net.createServer((client) => this.#accept(client));
    // Listening again on its port after a refusal can find the port briefly taken: try again.
    this.#server.on("error", () =>
      setTimeout(() => this.#server.listen(this.#port, "127.0.0.1"), 50).unref(),
    );
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(port, "127.0.0.1", resolve));
    this.#port = (this.#server.address() as net.AddressInfo).port;
    return this.#port;
  }

  /**
   * Loses the `nth` answer from now (a chunk the server sends; one per command when one command
   * is out at a time): cuts both sides of its connection instead of passing it on, then refuses
   * new connections for `refuseMs`. Resolves when it happened.
   */
  loseAnswer(nth: number, refuseMs: number): Promise<void> {
    return new Promise((done) => {
      this.#cut = { answersLeft: nth, refuseMs, done };
    });
  }

  /**
   * Stops passing anything on, either way, on every connection (what it receives is kept back, and
   * never delivered): a link that stalls, as a partition or a dying host makes it.
   */
  hold(): void {
    this.#held = true;
  }

  close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    if (!this.#server.listening) return Promise.resolve();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** Stops listening (connecting is refused) for `ms`, then listens on the same port again. */
  #refuseFor(ms: number): void {
    if (ms <= 0) return;
    this.#server.close();
    setTimeout(() => void this.listen(this.#port), ms).unref();
  }

  #accept(client: net.Socket): void {
    const upstream = net.connect(this.#target, "127.0.0.1");
    for (const s of [client, upstream]) {
      this.#sockets.add(s);
      s.on("close", () => {
        this.#sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
      s.on("error", () => {});
    }
    client.on("data", (chunk) => {
      if (!this.#held) upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (this.#held) return;
      const cut = this.#cut;
      if (cut && --cut.answersLeft === 0) {
        this.#cut = undefined;
        this.#refuseFor(cut.refuseMs);
        client.destroy();
        upstream.destroy();
        cut.done();
        return;
      }
      client.write(chunk);
    });
  }
}
