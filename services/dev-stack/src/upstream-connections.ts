/**
 * The gateway's kept-alive connections to the services, and what it does when one fails.
 *
 * A service closes a connection that has been idle for its keep-alive timeout (a Node server's
 * `keepAliveTimeout`: 5 s by default, as in the test platform, plus Node's one-second buffer;
 * 65 s in shared/http/serve.ts). A request the gateway sends on a connection just as the
 * service closes it meets a reset and gets no answer; the gateway then answered 503 (a console
 * page that never drew, a login form that never came, in the browser tests under load). Node's agent lets an idle connection
 * go before the timeout a service announces (`Keep-Alive: timeout=5`) only when the agent has
 * a socket timeout of its own, which would also time the requests in flight: this agent lets
 * its idle connections go after UPSTREAM_IDLE_MS instead, well before any service's timeout.
 *
 * The race can still be lost when the gateway's event loop is held up for longer than that
 * margin (a loaded machine). A GET or HEAD without a body that failed on a reused connection
 * before any answer is then sent once more on a new connection, as nginx does with its cached
 * upstream connections and as Node's documentation of `request.reusedSocket` suggests: the
 * service closed that connection as idle, so it never read the request, and repeating such a
 * request is safe whatever happened. Anything else still answers 503.
 */
import http from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

/** How long a connection to a service stays open unused: under Node's default keep-alive timeout (5 s), with room. */
export const UPSTREAM_IDLE_MS = 2_000;

export class UpstreamAgent extends http.Agent {
  constructor(idleMs = UPSTREAM_IDLE_MS) {
    super({ keepAlive: true, maxSockets: 256 });
    // Runs after the agent's own listener has put the connection among its free ones; the agent
    // destroys a free connection that times out.
    this.on("free", (socket: Socket) => socket.setTimeout(idleMs));
  }

  /** A connection taken up again has no idle limit while its request is under way (a slow answer is not idleness). */
  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    (socket as Socket).setTimeout(0);
    super.reuseSocket(socket, request);
  }
}

/**
 * Whether a request that failed before any answer may be sent again on a new connection: it went
 * out on a reused connection, its method is safe to repeat, and it has no body to send again.
 */
export function resendable(request: http.IncomingMessage, upstream: http.ClientRequest): boolean {
  const bodiless =
    request.headers["transfer-encoding"] === undefined &&
    Number(request.headers["content-length"] ?? 0) === 0;
  return upstream.reusedSocket && (request.method === "GET" || request.method === "HEAD") && bodiless;
}
