/**
 * Graceful shutdown: a real data-service process receives SIGTERM while a
 * request is in flight (a custom provider that takes 800 ms); the request
 * completes, new connections are refused, the process exits 0.
 */
import { expect } from "chai";
import { demoProject } from "../fixtures/demo-project.ts";
import { type DataProcess, startDataProcess } from "../support/data-process.ts";
import { adminClient, call } from "../support/http.ts";

const SLOW_PROVIDER = `
function slowCreate() {
  return {
    getLoginInfo: function () { return { fields: [], links: [] }; },
    authenticate: async function (payload) {
      await new Promise(function (r) { setTimeout(r, 800); });
      return { roleNames: ["Full access"], userIdentifier: String(payload.username) };
    },
  };
}`;

describe("graceful shutdown", () => {
  let service: DataProcess | undefined;
  after(() => service?.cleanup());

  it("drains in-flight requests on SIGTERM, then exits 0", async function () {
    this.timeout(60_000);
    service = await startDataProcess({ SANDBOX_TIMEOUT_MS: "5000" });
    const { base } = service;
    const admin = adminClient(base, service.adminToken);
    await admin.putAccount("acme");
    const def = demoProject({
      authentication: { provider: "custom", library: "slow", createFunction: "slowCreate" },
      libraries: { slow: { code: SLOW_PROVIDER } },
    });
    expect((await admin.putProject("acme", "demo", def)).status).to.equal(201);

    const inFlight = call(base, "POST", "/internal/v1/accounts/acme/projects/demo/authenticate", {
      body: { version: "v1", payload: { username: "slowpoke" }, enablePasswordChange: false },
      headers: { authorization: `Bearer ${service.serviceToken}`, connection: "close" },
    });
    await new Promise((r) => setTimeout(r, 300));
    service.child.kill("SIGTERM");
    const reply = await inFlight;
    expect(reply.status).to.equal(200);
    expect(reply.body.verdict).to.deep.include({ ok: true, userIdentifier: "slowpoke" });
    expect(await service.exited).to.equal(0);
    const after = await call(base, "GET", "/healthz").catch((err: Error) => err);
    expect(after).to.be.instanceOf(Error);
  });
});
