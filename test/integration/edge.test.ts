/**
 * The edge of the one base URL: Debian's nginx with the configuration rendered from the routing
 * table (shared/routing/nginx.ts), started as `make run` starts it (services/dev-stack/src/edge.ts),
 * in front of real HTTP servers on loopback that say which service they play.
 */

import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { type Edge, startEdge } from "../../services/dev-stack/src/edge.ts";
import { freePort } from "../../services/dev-stack/src/stores.ts";
import { routeFor, type ServiceName } from "../../shared/routing/routes.ts";

const LIMIT = 64 * 1024;

interface Upstream {
  server: http.Server;
  address: string;
  requests: { method: string; url: string; headers: http.IncomingHttpHeaders; bodyBytes: number }[];
  connections: number;
  ready: boolean;
  close(): Promise<void>;
}

/** A service stand-in: answers its name, the path and the headers it got; /readyz as told. */
async function upstream(
  name: string,
  handle?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean,
): Promise<Upstream> {
  const u = { requests: [], connections: 0, ready: true } as unknown as Upstream;
  u.server = http.createServer((req, res) => {
    if (req.url === "/readyz") {
      res.writeHead(u.ready ? 200 : 503, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: u.ready ? "ready" : "not ready" }));
      return;
    }
    if (handle?.(req, res)) return;
    let bodyBytes = 0;
    req.on("data", (chunk: Buffer) => {
      bodyBytes += chunk.length;
    });
    req.on("end", () => {
      u.requests.push({ method: req.method!, url: req.url!, headers: req.headers, bodyBytes });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ service: name, url: req.url, headers: req.headers, bodyBytes }));
    });
  });
  u.server.keepAliveTimeout = 65_000;
  u.server.on("connection", () => u.connections++);
  await new Promise<void>((r) => u.server.listen(0, "127.0.0.1", r));
  u.address = `127.0.0.1:${(u.server.address() as AddressInfo).port}`;
  u.close = () =>
    new Promise((r) => {
      u.server.close(() => r());
      u.server.closeAllConnections();
    });
  return u;
}

describe("the edge (nginx rendered from the routing table)", function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const started: { close(): Promise<void> }[] = [];

  async function edge(
    upstreams: Partial<Record<ServiceName, Upstream[]>>,
    maxBodyBytes = LIMIT,
  ): Promise<Edge> {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-edge-"));
    dirs.push(dir);
    const e = await startEdge(dir, {
      port: await freePort(),
      maxBodyBytes,
      upstreams: Object.fromEntries(Object.entries(upstreams).map(([k, v]) => [k, v.map((u) => u.address)])),
    });
    started.push({ close: () => e.stop() });
    return e;
  }
  async function service(name: string, handle?: Parameters<typeof upstream>[1]): Promise<Upstream> {
    const u = await upstream(name, handle);
    started.push(u);
    return u;
  }

  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.close()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("routes as the routing table's first match does, never /internal, and answers 404 for the rest", async () => {
    const [auth, data, consoleServer] = [
      await service("auth"),
      await service("data"),
      await service("console"),
    ];
    const e = await edge({ auth: [auth], data: [data], console: [consoleServer] });
    const samples = [
      "/rest/acme/demo/v1/@authentication",
      "/rest/acme/demo/v1/@authentication/",
      "/rest/acme/demo/v1/customer",
      "/rest/acme/demo/v1/customer/@authentication",
      "/admin/v1/accounts/acme/projects/demo/apikeys",
      "/admin/v1/accounts/acme/projects/demo/apikeys/k-1",
      "/admin/v1/accounts/acme/@authentication",
      "/admin/v1/accounts/acme/admins/ann",
      "/admin/v1",
      "/admin/v2/accounts",
      "/internal/v1/projects/acme/demo/authentication",
      "/restx/acme",
      "/console/",
      "/console/assets/index.js",
      "/consolex",
      "/metrics",
      "/",
    ];
    for (const sample of samples) {
      const r = await fetch(`${e.url}${sample}?q=1`);
      const body = (await r.json()) as { service?: string; url?: string; errorCode?: number };
      const want = routeFor(sample);
      if (want) {
        expect({ status: r.status, service: body.service, url: body.url }, sample).to.deep.equal({
          status: 200,
          service: want,
          url: `${sample}?q=1`,
        });
      } else {
        expect({ status: r.status, errorCode: body.errorCode }, sample).to.deep.equal({
          status: 404,
          errorCode: 4041,
        });
      }
    }
    expect(routeFor("/internal/v1/auth/verdict")).to.equal(undefined);
    // What nginx cannot read (as ingress-nginx cannot) is refused with Tessera's error body.
    for (const unreadable of ["/rest/a/p/v1/@tables/%ZZ", "/console/assets/..%2f..%2f..%2fpackage.json"]) {
      const r = await fetch(`${e.url}${unreadable}`);
      expect(r.status, unreadable).to.equal(400);
      expect(await r.json(), unreadable).to.include({ statusCode: 400, errorCode: 4001 });
    }
    expect(data.requests.concat(consoleServer.requests).map((r) => r.url)).to.not.include.members([
      "/rest/a/p/v1/@tables/%ZZ",
    ]);
  });

  it("overwrites X-Forwarded-For/-Host/-Proto with what it saw and drops Forwarded, whatever the client sent", async () => {
    const [auth, data] = [await service("auth"), await service("data")];
    const e = await edge({ auth: [auth], data: [data] });
    const r = await fetch(`${e.url}/rest/a/p/v1/customer`, {
      headers: {
        "x-forwarded-for": "203.0.113.9",
        "x-forwarded-host": "evil.example",
        "x-forwarded-proto": "https",
        forwarded: "for=203.0.113.9",
        "x-request-id": "client-chosen-1",
      },
    });
    const seen = ((await r.json()) as { headers: Record<string, string> }).headers;
    expect(seen["x-forwarded-for"]).to.equal("127.0.0.1");
    expect(seen["x-forwarded-host"]).to.equal(new URL(e.url).host);
    expect(seen["x-forwarded-proto"]).to.equal("http");
    expect(seen.forwarded).to.equal(undefined);
    expect(seen["x-request-id"]).to.equal("client-chosen-1");
  });

  /** A POST whose body is written in pieces, as a Node client sends a large one; the answer or the error. */
  function post(
    url: string,
    bytes: number,
    declared: boolean,
  ): Promise<{ status: number; body: string } | Error> {
    return new Promise((resolve) => {
      const req = http.request(`${url}/rest/a/p/v1/customer`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(declared ? { "content-length": bytes } : {}) },
      });
      req.on("response", (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (t: string) => {
          body += t;
        });
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      req.on("error", resolve);
      const chunk = Buffer.alloc(16 * 1024, "x");
      let left = bytes;
      const write = () => {
        while (left > 0) {
          const piece = chunk.subarray(0, Math.min(chunk.length, left));
          left -= piece.length;
          if (!req.write(piece)) return void req.once("drain", write);
        }
        req.end();
      };
      write();
    });
  }

  it("answers 413 with Tessera's error body to a body over the limit, after reading it: the client never sees a reset", async () => {
    const [auth, data] = [await service("auth"), await service("data")];
    const e = await edge({ auth: [auth], data: [data] });
    for (const declared of [true, false]) {
      for (const bytes of [LIMIT + 1, 16 * LIMIT]) {
        const answer = await post(e.url, bytes, declared);
        expect(answer, `${bytes} bytes, ${declared ? "Content-Length" : "chunked"}`).to.not.be.instanceOf(
          Error,
        );
        const { status, body } = answer as { status: number; body: string };
        expect(status).to.equal(413);
        expect(JSON.parse(body)).to.include({ statusCode: 413, errorCode: 4131 });
      }
    }
    // Nothing of them reached the service; a body at the limit does.
    expect(data.requests).to.deep.equal([]);
    const atLimit = await post(e.url, LIMIT, true);
    expect(atLimit).to.deep.include({ status: 200 });
    expect(data.requests.map((r) => r.bodyBytes)).to.deep.equal([LIMIT]);
  });

  it("keeps connections to a service alive across requests", async () => {
    const [auth, data] = [await service("auth"), await service("data")];
    const e = await edge({ auth: [auth], data: [data] });
    for (let i = 0; i < 20; i++) expect((await fetch(`${e.url}/rest/a/p/v1/c${i}`)).status).to.equal(200);
    expect(data.requests).to.have.length(20);
    expect(data.connections).to.equal(1);
  });

  it("passes server-sent events as the service writes them (no buffering)", async () => {
    let sendSecond = () => {};
    const data = await service("data", (req, res) => {
      if (!req.url!.includes("/@live")) return false;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write("event: change\ndata: one\n\n");
      sendSecond = () => res.end("event: change\ndata: two\n\n");
      return true;
    });
    const auth = await service("auth");
    const e = await edge({ auth: [auth], data: [data] });
    const r = await fetch(`${e.url}/rest/a/p/v1/customer/@live`);
    expect(r.headers.get("content-type")).to.equal("text/event-stream");
    const reader = r.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    // The first event arrived while the service still holds the second back.
    expect(first).to.equal("event: change\ndata: one\n\n");
    sendSecond();
    let rest = "";
    for (let c = await reader.read(); !c.done; c = await reader.read())
      rest += new TextDecoder().decode(c.value);
    expect(rest).to.equal("event: change\ndata: two\n\n");
  });

  it("answers /readyz 200 when a replica of every service is ready, 503 when one service has none", async () => {
    const auth = await service("auth");
    const [data1, data2] = [await service("data"), await service("data")];
    const consoleServer = await service("console");
    const e = await edge({ auth: [auth], data: [data1, data2], console: [consoleServer] });
    const readyz = async () => (await fetch(`${e.url}/readyz`)).status;
    expect(await readyz()).to.equal(200);
    data1.ready = false;
    for (let i = 0; i < 4; i++) expect(await readyz(), "one data replica is still ready").to.equal(200);
    data2.ready = false;
    expect(await readyz()).to.equal(503);
    data2.ready = true;
    consoleServer.ready = false;
    expect(await readyz()).to.equal(503);
    consoleServer.ready = true;
    auth.ready = false;
    expect(await readyz()).to.equal(503);
    await auth.close();
    expect(await readyz(), "auth is gone").to.equal(503);
  });

  it("takes the replicas of a service in turn, and sends nothing to one that is gone", async () => {
    const auth = await service("auth");
    const [data1, data2] = [await service("data"), await service("data")];
    const e = await edge({ auth: [auth], data: [data1, data2] });
    for (let i = 0; i < 10; i++) expect((await fetch(`${e.url}/rest/a/p/v1/c${i}`)).status).to.equal(200);
    expect(data1.requests.length).to.equal(5);
    expect(data2.requests.length).to.equal(5);
    await data1.close();
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${e.url}/rest/a/p/v1/c${i}`, { method: "POST", body: "{}" });
      expect(r.status, "a POST too: nothing of it was sent to the replica that is gone").to.equal(200);
    }
    expect(data2.requests.length).to.equal(15);
    // No replica left: refused before anything was sent, so nothing was done.
    await data2.close();
    const refused = await fetch(`${e.url}/rest/a/p/v1/c`, { method: "POST", body: "{}" });
    expect(refused.status).to.equal(503);
    expect(((await refused.json()) as { errorMessage: string }).errorMessage).to.match(/nothing was written/);
  });

  it("sends a GET again when the service drops the kept-alive connection it went out on; never a POST", async () => {
    // A service that closes a connection when a second request comes on it: what the edge
    // meets when a service closes a connection as idle just as a request goes out on it.
    const served = new WeakSet<Socket>();
    const seen: string[] = [];
    const closing = await service("data", (req, _res) => {
      if (served.has(req.socket)) {
        seen.push(`${req.method} ${req.url}, dropped`);
        req.socket.destroy();
        return true;
      }
      served.add(req.socket);
      seen.push(`${req.method} ${req.url}`);
      return false;
    });
    const auth = await service("auth");
    const e = await edge({ auth: [auth], data: [closing] });
    expect((await fetch(`${e.url}/rest/a/p/v1/one`)).status).to.equal(200);
    expect((await fetch(`${e.url}/rest/a/p/v1/two`)).status).to.equal(200);
    const write = await fetch(`${e.url}/rest/a/p/v1/three`, { method: "POST", body: "{}" });
    expect(write.status).to.equal(503);
    const unanswered = (await write.json()) as { errorCode: number; errorMessage: string };
    expect(unanswered.errorCode).to.equal(5031);
    // It was sent: whether the service carried it out is not known.
    expect(unanswered.errorMessage).to.match(/may or may not have been carried out/);
    expect(seen).to.deep.equal([
      "GET /rest/a/p/v1/one",
      "GET /rest/a/p/v1/two, dropped",
      "GET /rest/a/p/v1/two",
      "POST /rest/a/p/v1/three, dropped",
    ]);
  });
});
