/** The local gateway survives clients that disconnect mid-request, and routes as the routing table says. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { createGateway } from "../../services/dev-stack/src/gateway.ts";
import { routeFor } from "../../services/dev-stack/src/routing.ts";

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
});
