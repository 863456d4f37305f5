/**
 * Graceful shutdown (issue 7): a real data-service process receives SIGTERM
 * while a request is in flight (a custom provider that takes 800 ms); the
 * request completes, new connections are refused, the process exits 0.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { expect } from "chai";
import { freePort } from "../../services/gateway/src/stores.ts";
import { demoProject } from "../fixtures/demo-project.ts";
import { adminClient, call } from "../support/http.ts";
import { isolationPrefix, testStores } from "../support/stores.ts";

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
  let child: ChildProcess | undefined;
  after(() => child?.kill("SIGKILL"));

  it("drains in-flight requests on SIGTERM, then exits 0", async function () {
    this.timeout(60_000);
    const { mongoUrl, redisUrl } = await testStores();
    const prefix = isolationPrefix();
    const port = await freePort();
    const env = {
      ...process.env,
      PORT: String(port),
      MONGO_URL: mongoUrl,
      META_DB: `${prefix}meta`,
      TENANT_DB_PREFIX: prefix,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `tessera-test:${prefix}`,
      ADMIN_TOKEN: "admin-token",
      SERVICE_TOKEN: "service-token",
      LOG_LEVEL: "silent",
      SANDBOX_TIMEOUT_MS: "5000",
    };
    const main = path.resolve(import.meta.dirname, "../../services/data/src/main.ts");
    child = spawn(process.execPath, ["--no-node-snapshot", main], { env, stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 200; i++) {
      const ready = await call(base, "GET", "/readyz").catch(() => undefined);
      if (ready?.status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const admin = adminClient(base, "admin-token");
    await admin.putAccount("acme");
    const def = demoProject({
      authentication: { provider: "custom", library: "slow", createFunction: "slowCreate" },
      libraries: { slow: { code: SLOW_PROVIDER } },
    });
    expect((await admin.putProject("acme", "demo", def)).status).to.equal(201);

    const inFlight = call(base, "POST", "/internal/v1/accounts/acme/projects/demo/authenticate", {
      body: { version: "v1", payload: { username: "slowpoke" }, enablePasswordChange: false },
      headers: { authorization: "Bearer service-token", connection: "close" },
    });
    await new Promise((r) => setTimeout(r, 300));
    child.kill("SIGTERM");
    const reply = await inFlight;
    expect(reply.status).to.equal(200);
    expect(reply.body.verdict).to.deep.include({ ok: true, userIdentifier: "slowpoke" });
    expect(await exited).to.equal(0);
    const after = await call(base, "GET", "/healthz").catch((err: Error) => err);
    expect(after).to.be.instanceOf(Error);

    // Clean up what the child created.
    const { MongoClient } = (await import("mongoose")).default.mongo;
    const client = await new MongoClient(mongoUrl).connect();
    const { databases } = await client.db("admin").command({ listDatabases: 1, nameOnly: true });
    for (const { name } of databases as { name: string }[])
      if (name.startsWith(prefix)) await client.db(name).dropDatabase();
    await client.close();
  });
});
