/**
 * The local gateway survives clients that disconnect mid-request, routes as the routing table
 * says, and loses no GET to a kept-alive connection a service closed (upstream-connections.ts).
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { expect } from "chai";
import { createGateway } from "../../services/dev-stack/src/gateway.ts";
import { routeFor } from "../../services/dev-stack/src/routing.ts";
import { until } from "../support/until.ts";

function listen(server: http.Server): Promise<string> {
  return new Promise((r) =>
    server.listen(0, "127.0.0.1", () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

describe("gateway", () => {
  it("routes @authentication and key admin to auth, the rest to data, never /internal", () => {
    expect(routeFor("/rest/a/p/v1/@authentication")).to.equal("auth");
    expect(routeFor("/admin/v1/accounts/a/projects/p/apikeys/xyz")).to.equal("auth");
    expect(routeFor("/admin/v1/accounts/a/@authentication")).to.equal("auth");
    expect(routeFor("/admin/v1/accounts/a/admins/ann")).to.equal("data");
    expect(routeFor("/rest/a/p/v1/customer")).to.equal("data");
    expect(routeFor("/admin/v1/accounts/a")).to.equal("data");
    expect(routeFor("/internal/v1/accounts/a/projects/p/settings")).to.equal(undefined);
  });

  it("overwrites X-Forwarded-For/-Host/-Proto with what it saw, whatever the client sent", async () => {
    const echo = http.createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(req.headers));
    });
    const upstream = await listen(echo);
    const gateway = createGateway({ upstreams: { auth: upstream, data: upstream }, ready: async () => true });
    const base = await listen(gateway);
    try {
      const r = await fetch(`${base}/rest/a/p/v1/customer`, {
        headers: {
          "x-forwarded-for": "203.0.113.9",
          "x-forwarded-host": "evil.example",
          "x-forwarded-proto": "https",
        },
      });
      const seen = (await r.json()) as Record<string, string>;
      expect(seen["x-forwarded-for"]).to.equal("127.0.0.1");
      expect(seen["x-forwarded-host"]).to.equal(new URL(base).host);
      expect(seen["x-forwarded-proto"]).to.equal("http");
    } finally {
      gateway.close();
      gateway.closeAllConnections();
      echo.close();
      echo.closeAllConnections();
    }
  });

  it("keeps serving after clients disconnect while the service is still working", async () => {
    const slow = http.createServer((req, res) => {
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ path: req.url }));
      }, 150);
    });
    const upstream = await listen(slow);
    const gateway = createGateway({ upstreams: { auth: upstream, data: upstream }, ready: async () => true });
    const base = await listen(gateway);
    try {
      for (let i = 0; i < 20; i++) {
        await fetch(`${base}/rest/a/p/v1/customer`, { signal: AbortSignal.timeout(20) }).catch(
          () => undefined,
        );
      }
      await new Promise((r) => setTimeout(r, 300));
      const r = await fetch(`${base}/rest/a/p/v1/customer`);
      expect(r.status).to.equal(200);
      expect(await r.json()).to.deep.equal({ path: "/rest/a/p/v1/customer" });
    } finally {
      gateway.close();
      gateway.closeAllConnections();
      slow.close();
      slow.closeAllConnections();
    }
  });

  it("sends a GET again on a new connection when the service drops the kept-alive one it went out on; not a POST", async () => {
    // A service that closes a connection when a second request comes on it: what the gateway
    // meets when a service closes a connection as idle just as a request goes out on it.
    const numbers = new Map<Socket, number>();
    const served = new WeakSet<Socket>();
    const seen: string[] = [];
    const closing = http.createServer((req, res) => {
      const where = `${req.method} ${req.url} on connection ${numbers.get(req.socket)}`;
      if (served.has(req.socket)) {
        seen.push(`${where}, dropped`);
        req.socket.destroy();
        return;
      }
      served.add(req.socket);
      seen.push(where);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ path: req.url }));
    });
    closing.on("connection", (socket: Socket) => numbers.set(socket, numbers.size + 1));
    const upstream = await listen(closing);
    const gateway = createGateway({ upstreams: { auth: upstream, data: upstream }, ready: async () => true });
    const base = await listen(gateway);
    try {
      const first = await fetch(`${base}/rest/a/p/v1/one`);
      expect(await first.json()).to.deep.equal({ path: "/rest/a/p/v1/one" });
      const second = await fetch(`${base}/rest/a/p/v1/two`);
      expect(second.status).to.equal(200);
      expect(await second.json()).to.deep.equal({ path: "/rest/a/p/v1/two" });
      // The GET sent again had a connection of its own; the next one opens a kept-alive one.
      expect((await fetch(`${base}/rest/a/p/v1/three`)).status).to.equal(200);
      // A request with a body may have been acted on before the connection went: never sent twice.
      const write = await fetch(`${base}/rest/a/p/v1/four`, { method: "POST", body: "{}" });
      expect(write.status).to.equal(503);
      expect(seen).to.deep.equal([
        "GET /rest/a/p/v1/one on connection 1",
        "GET /rest/a/p/v1/two on connection 1, dropped",
        "GET /rest/a/p/v1/two on connection 2",
        "GET /rest/a/p/v1/three on connection 3",
        "POST /rest/a/p/v1/four on connection 3, dropped",
      ]);
    } finally {
      gateway.close();
      gateway.closeAllConnections();
      closing.close();
      closing.closeAllConnections();
    }
  });

  it("lets a kept-alive connection to a service go when it has been idle, before the service would", async () => {
    const echo = http.createServer((req, res) => res.end(req.url));
    // Far longer than the gateway keeps a connection unused: whoever closes it, it is not the service.
    echo.keepAliveTimeout = 60_000;
    let open = 0;
    echo.on("connection", (socket: Socket) => {
      open++;
      socket.on("close", () => open--);
    });
    const upstream = await listen(echo);
    const gateway = createGateway({ upstreams: { auth: upstream, data: upstream }, ready: async () => true });
    const base = await listen(gateway);
    try {
      expect(await (await fetch(`${base}/rest/a/p/v1/one`)).text()).to.equal("/rest/a/p/v1/one");
      expect(open, "the connection the request came on").to.equal(1);
      await until("the gateway closes its idle connection to the service", async () => open === 0, 15_000);
    } finally {
      gateway.close();
      gateway.closeAllConnections();
      echo.close();
      echo.closeAllConnections();
    }
  });
});
