/**
 * Graceful shutdown: a real data-service process receives SIGTERM while a
 * request is in flight (a custom provider that waits for a gate the test
 * holds); the request completes, new connections are refused, the process exits 0.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { demoProject } from "../fixtures/demo-project.ts";
import { type DataProcess, startDataProcess } from "../support/data-process.ts";
import { adminClient, call } from "../support/http.ts";
import { until } from "../support/until.ts";

/** A provider whose login waits until the gate at `url` answers. */
const slowProvider = (url: string) => `
function slowCreate() {
  return {
    getLoginInfo: function () { return { fields: [], links: [] }; },
    authenticate: async function (payload) {
      await tessera.fetchJson(${JSON.stringify(url)});
      return { roleNames: ["Full access"], userIdentifier: String(payload.username) };
    },
  };
}`;

/** An HTTP server that holds every request until `open()`; `arrived` counts them. */
async function startGate() {
  const held: http.ServerResponse[] = [];
  let opened = false;
  const answer = (res: http.ServerResponse) =>
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  const server = http.createServer((_req, res) => {
    gate.arrived++;
    if (opened) answer(res);
    else held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const gate = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/gate`,
    arrived: 0,
    open() {
      opened = true;
      for (const res of held.splice(0)) answer(res);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return gate;
}

describe("graceful shutdown", () => {
  let service: DataProcess | undefined;
  after(() => service?.cleanup());

  it("drains in-flight requests on SIGTERM, then exits 0", async function () {
    this.timeout(60_000);
    const gate = await startGate();
    try {
      service = await startDataProcess({ SANDBOX_TIMEOUT_MS: "30000", SANDBOX_ALLOW_LOOPBACK_FETCH: "true" });
      const { base } = service;
      const admin = adminClient(base, service.adminToken);
      await admin.putAccount("acme");
      const def = demoProject({
        authentication: {
          provider: "custom",
          library: "slow",
          createFunction: "slowCreate",
          allowedHosts: ["127.0.0.1"],
        },
        libraries: { slow: { code: slowProvider(gate.url) } },
      });
      expect((await admin.putProject("acme", "demo", def)).status).to.equal(201);

      const inFlight = call(base, "POST", "/internal/v1/accounts/acme/projects/demo/authenticate", {
        body: { version: "v1", payload: { username: "slowpoke" }, enablePasswordChange: false },
        headers: { authorization: `Bearer ${service.serviceToken}`, connection: "close" },
      });
      await until("the login is in flight", async () => gate.arrived === 1);
      service.child.kill("SIGTERM");
      await until("the service refuses new connections", async () => {
        const refused = await call(base, "GET", "/healthz").catch((err: Error) => err);
        return refused instanceof Error;
      });
      gate.open();
      const reply = await inFlight;
      expect(reply.status).to.equal(200);
      expect(reply.body.verdict).to.deep.include({ ok: true, userIdentifier: "slowpoke" });
      expect(await service.exited).to.equal(0);
      const after = await call(base, "GET", "/healthz").catch((err: Error) => err);
      expect(after).to.be.instanceOf(Error);
    } finally {
      await gate.close();
    }
  });
});
