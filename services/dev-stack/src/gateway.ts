/**
 * The local gateway of `make run` and the integration tests: one base URL,
 * routed exactly as the production Ingress routes (routing.ts). It forwards
 * the client address, host and protocol it saw (overwriting whatever the client
 * sent in X-Forwarded-*), and adds a request id when none came. A service may
 * have several replicas (upstream-pool.ts): requests take them in turn, and a
 * request whose connection a replica refused (it is down) goes to the next one,
 * which is safe because nothing of it was sent yet; requests a replica had in
 * flight when it died fail (503). Kept-alive connections to a service are let go
 * before the service would close them, and a GET that met one closing anyway is
 * sent again on a new connection (upstream-connections.ts).
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import { pipeline } from "node:stream";
import { errors } from "../../../shared/errors.ts";
import { routeFor, type ServiceName } from "./routing.ts";
import { resendable, UpstreamAgent } from "./upstream-connections.ts";
import { UpstreamPool } from "./upstream-pool.ts";

type Upstream = string | UpstreamPool;

export interface GatewayOptions {
  /** The console's server is optional: without it, /console answers 404 like an unrouted path. */
  upstreams: Record<Exclude<ServiceName, "console">, Upstream> & { console?: Upstream | undefined };
  /** Which service serves a path (default: the routing table, as the Ingress routes). */
  route?: (path: string) => ServiceName | undefined;
  /** GET /readyz answers 200 when this resolves true. */
  ready: () => Promise<boolean>;
  /**
   * Request bodies over this many bytes are answered 413 here (the rest of the body read and
   * dropped) and never reach a service: the largest limit of the services behind it.
   */
  maxBodyBytes?: number;
}

function sendError(res: http.ServerResponse, status: number, errorCode: number, errorMessage: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify({ statusCode: status, errorCode, errorMessage }));
}

export function createGateway(options: GatewayOptions): http.Server {
  const keepAlive = new UpstreamAgent();
  // With several replicas every request opens its own connection: one to a replica that died is
  // refused at once and goes to another, where a kept-alive one could be a dead process's.
  const fresh = new http.Agent({ keepAlive: false, maxSockets: 256 });
  const pools = Object.fromEntries(
    Object.entries(options.upstreams).flatMap(([k, v]) =>
      v ? [[k, typeof v === "string" ? new UpstreamPool([v]) : v]] : [],
    ),
  ) as Partial<Record<ServiceName, UpstreamPool>>;
  return http.createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (path === "/readyz" && req.method === "GET") {
      const ready = await options.ready().catch(() => false);
      res.writeHead(ready ? 200 : 503, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: ready ? "ready" : "not ready" }));
      return;
    }
    const service = (options.route ?? routeFor)(path);
    const pool = service && pools[service];
    if (!pool) {
      sendError(res, 404, 4041, `No resource at ${path}`);
      return;
    }
    const headers = { ...req.headers };
    headers["x-request-id"] ??= randomUUID();
    const limit = options.maxBodyBytes;
    const tooLarge = () => {
      req.resume();
      const error = errors.tooLarge(limit!);
      if (res.headersSent) return void res.destroy();
      res.writeHead(error.statusCode, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify(error.body(String(headers["x-request-id"]))));
    };
    if (limit !== undefined && Number(req.headers["content-length"] ?? 0) > limit) return tooLarge();
    // The edge: what the client claims is replaced by what the gateway saw (the services trust only it).
    headers["x-forwarded-for"] = req.socket.remoteAddress ?? "";
    headers["x-forwarded-host"] = req.headers.host ?? "";
    headers["x-forwarded-proto"] = "http";
    delete headers.forwarded;
    const refused = new Set<string>();
    /** Sends the request to `target`: on a kept-alive connection unless `newConnection`. */
    const forward = (target: URL, newConnection = false) => {
      let answered = false;
      const upstream = http.request(
        {
          agent: newConnection || pool.size > 1 ? fresh : keepAlive,
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers,
        },
        (up) => {
          answered = true;
          // The client may have gone away while the service was working: drop the answer.
          if (res.destroyed) {
            up.resume();
            return;
          }
          res.writeHead(up.statusCode ?? 502, up.headers);
          pipeline(up, res, () => {});
          // A service that answered before reading the whole body (413, say) needs no more of it:
          // the gateway reads the rest and drops it, so the client is not reset before it reads the answer.
          up.once("end", () => {
            if (req.complete) return;
            detach();
            req.resume();
          });
        },
      );
      // A client that disconnects mid-request aborts the upstream request too.
      const abort = () => {
        if (!res.writableEnded) upstream.destroy();
      };
      res.on("close", abort);
      let sending = false;
      const onError = (err: NodeJS.ErrnoException) => {
        res.off("close", abort);
        // Refused before a byte of the request went out: the replica is down; another one may serve it.
        if (!sending && err.code === "ECONNREFUSED") {
          pool.down(target);
          refused.add(target.href);
          const next = pool.pick(refused);
          if (next && !res.destroyed) return forward(next);
        }
        // A kept-alive connection the service closed as idle just as the request went out on it.
        if (!answered && !newConnection && !res.destroyed && resendable(req, upstream)) {
          return forward(target, true);
        }
        // An upstream that answered before reading the whole body (e.g. 413) may reset afterwards.
        if (!res.writableEnded && !res.destroyed) {
          sendError(res, 503, 5031, `The ${service} service is unavailable; nothing was written`);
        }
      };
      upstream.on("error", onError);
      // A body without a declared length is counted as it passes: past the limit, it is cut off.
      let seen = 0;
      const count = (chunk: Buffer) => {
        seen += chunk.length;
        if (limit === undefined || seen <= limit) return;
        detach();
        tooLarge();
      };
      /** The rest of the body goes nowhere, and the upstream request is dropped quietly. */
      const detach = () => {
        req.off("data", count).unpipe(upstream);
        upstream.off("error", onError).on("error", () => {});
        upstream.destroy();
      };
      // The request body is sent once the connection stands (a new connection may still be refused).
      const send = () => {
        sending = true;
        req.on("data", count).pipe(upstream);
      };
      upstream.on("socket", (socket) => {
        if (socket.connecting) socket.once("connect", send);
        else send();
      });
    };
    forward(pool.pick()!);
  });
}
