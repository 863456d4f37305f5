/**
 * The local gateway of `make run` and the integration tests: one base URL,
 * routed exactly as the production Ingress routes (routing.ts). It forwards
 * the client address, host and protocol, and adds a request id when none came.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import { pipeline } from "node:stream";
import { routeFor, type ServiceName } from "./routing.ts";

export interface GatewayOptions {
  upstreams: Record<ServiceName, string>;
  /** GET /readyz answers 200 when this resolves true. */
  ready: () => Promise<boolean>;
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
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const upstreams = Object.fromEntries(
    Object.entries(options.upstreams).map(([k, v]) => [k, new URL(v)]),
  ) as Record<ServiceName, URL>;
  return http.createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (path === "/readyz" && req.method === "GET") {
      const ready = await options.ready().catch(() => false);
      res.writeHead(ready ? 200 : 503, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: ready ? "ready" : "not ready" }));
      return;
    }
    const service = routeFor(path);
    if (!service) {
      sendError(res, 404, 4041, `No resource at ${path}`);
      return;
    }
    const target = upstreams[service];
    const headers = { ...req.headers };
    headers["x-request-id"] ??= randomUUID();
    headers["x-forwarded-for"] = [req.headers["x-forwarded-for"], req.socket.remoteAddress]
      .filter(Boolean)
      .join(", ");
    headers["x-forwarded-host"] ??= req.headers.host ?? "";
    headers["x-forwarded-proto"] ??= "http";
    const upstream = http.request(
      { agent, host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (up) => {
        // The client may have gone away while the service was working: drop the answer.
        if (res.destroyed) {
          up.resume();
          return;
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        pipeline(up, res, () => {});
      },
    );
    // A client that disconnects mid-request aborts the upstream request too.
    res.on("close", () => {
      if (!res.writableEnded) upstream.destroy();
    });
    upstream.on("error", () => {
      // An upstream that answered before reading the whole body (e.g. 413) may reset afterwards.
      if (!res.writableEnded && !res.destroyed) {
        sendError(res, 503, 5031, `The ${service} service is unavailable; nothing was written`);
      }
    });
    pipeline(req, upstream, () => {});
  });
}
