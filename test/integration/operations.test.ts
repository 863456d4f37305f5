/**
 * Operational behaviour: metadata cache invalidation across processes, readiness
 * when a store goes away, metrics, request ids through auth → data, and logs
 * that never carry a key, a password or an Authorization header.
 */
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { expect } from "chai";
import { createDataService } from "../../services/data/src/service.ts";
import { startRedisServer } from "../../services/dev-stack/src/stores.ts";
import { createLogger } from "../../shared/logger.ts";
import { demoProject } from "../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient } from "../support/http.ts";
import { type Platform, startPlatform } from "../support/platform.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("operations", () => {
  describe("metadata cache", () => {
    let platform: Platform;
    after(() => platform?.close());

    it("a definition change through one data process is seen at once by another", async () => {
      platform = await startPlatform();
      const admin = adminClient(platform.baseUrl, platform.adminToken);
      await admin.putAccount("acme");
      await admin.putProject("acme", "demo", demoProject());
      const key = (await admin.createKey("acme", "demo", { name: "k", roles: ["Full access"] })).body.apikey;

      // A second process of the same deployment (same stores, same prefixes).
      const second = await createDataService(platform.dataConfig, createLogger("data2", "silent"));
      const server = http.createServer(second.app.callback());
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const secondUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        const before = await call(secondUrl, "GET", "/rest/acme/demo/v1/@tables/customer", {
          headers: keyHeader(key),
        });
        expect(before.body.columns.map((c: { name: string }) => c.name)).to.not.include("vip");
        const def = demoProject();
        (def.tables.customer.columns as Record<string, unknown>).vip = { type: "boolean" };
        expect((await admin.putProject("acme", "demo", def)).status).to.equal(200);
        let columns: string[] = [];
        for (let i = 0; i < 50 && !columns.includes("vip"); i++) {
          const r = await call(secondUrl, "GET", "/rest/acme/demo/v1/@tables/customer", {
            headers: keyHeader(key),
          });
          columns = r.body.columns.map((c: { name: string }) => c.name);
          if (!columns.includes("vip")) await sleep(20);
        }
        expect(columns).to.include("vip");
      } finally {
        await new Promise((r) => server.close(r));
        await second.close();
      }
    });
  });

  describe("readiness", () => {
    it("/readyz turns 503 when Redis is unreachable while /healthz stays 200", async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-ready-"));
      const redis = await startRedisServer(dir);
      const platform = await startPlatform({ REDIS_URL: redis.url });
      try {
        expect((await call(platform.dataUrl, "GET", "/readyz")).status).to.equal(200);
        expect((await call(platform.authUrl, "GET", "/readyz")).status).to.equal(200);
        await redis.stop();
        const data = await call(platform.dataUrl, "GET", "/readyz");
        expect(data.status).to.equal(503);
        expect(data.body.checks.redis).to.equal("unavailable");
        expect(data.body.checks.mongodb).to.equal("ok");
        expect((await call(platform.authUrl, "GET", "/readyz")).status).to.equal(503);
        const metrics = await call(platform.dataUrl, "GET", "/metrics");
        expect(metrics.body).to.match(/tessera_store_errors_total\{[^}]*store="redis"[^}]*\} [1-9]/);
        // The liveness probe stays green: the process is fine, a store is not.
        expect((await call(platform.dataUrl, "GET", "/healthz")).status).to.equal(200);
      } finally {
        await platform.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe("metrics, request ids and logs", () => {
    let platform: Platform;
    const lines: string[] = [];
    before(async () => {
      const sink = new Writable({
        write(chunk, _e, cb) {
          lines.push(...chunk.toString().split("\n").filter(Boolean));
          cb();
        },
      });
      platform = await startPlatform({}, { logSink: sink });
      const admin = adminClient(platform.baseUrl, platform.adminToken);
      await admin.putAccount("acme");
      await admin.putProject(
        "acme",
        "demo",
        demoProject({
          // Customer code whose errors quote request data: a rule and a provider.
          rules: [
            {
              name: "quoting rule",
              table: "purchaseorder",
              type: "event",
              code: "if (row.notes) throw new Error('cannot file ' + row.notes);",
            },
          ],
        }),
      );
      await admin.putUser("acme", "demo", "alice", { password: "s3cret-password", roles: ["Full access"] });
      const parsing = await admin.putProject(
        "acme",
        "parsing",
        demoProject({
          authentication: { provider: "custom", library: "parsing", createFunction: "parsingCreate" },
          libraries: {
            parsing: {
              code: "function parsingCreate() { return { authenticate(payload) { return JSON.parse(payload.password); } }; }",
            },
          },
        }),
      );
      expect(parsing.status, JSON.stringify(parsing.body)).to.equal(201);
    });
    after(() => platform.close());

    it("stamps its own request id and logs the client's beside it, from auth through to the data service", async () => {
      const r = await call(platform.baseUrl, "POST", "/rest/acme/demo/v1/@authentication", {
        body: { username: "alice", password: "s3cret-password" },
        headers: { "x-request-id": "trace-me-123" },
      });
      expect(r.status).to.equal(200);
      const stamped = r.headers.get("x-request-id");
      expect(stamped).to.match(/^[0-9a-f-]{36}$/);
      const logged = lines.map((l) => JSON.parse(l));
      const auth = logged.filter((l) => l.requestId === stamped);
      expect(auth.map((l) => l.service)).to.include("auth");
      for (const l of auth) expect(l.clientRequestId).to.equal("trace-me-123");
      // The data service's lines of the auth service's calls name that request as their client's.
      const data = logged.filter((l) => l.clientRequestId === stamped).map((l) => l.service);
      expect(data).to.include("data");
    });

    it("never logs a key, a password, an Authorization header or an auth parameter", async () => {
      const demo = projectClient(platform.baseUrl, "acme", "demo");
      const key = (await demo.login({ username: "alice", password: "s3cret-password" })).body
        .apikey as string;
      await call(platform.baseUrl, "GET", `${demo.root}/customer?auth=${key}:1`);
      await demo.get(key, "customer");
      await demo.login({ apikey: key });
      await demo.login(
        { username: "alice", password: "s3cret-password", newPassword: "n3w-password!" },
        "?enablePasswordChange!",
      );
      await demo.login({ username: "alice", password: "wrong-guess-1" });
      // The data service decodes parameter names: `a%75th` is `auth`.
      expect((await call(platform.baseUrl, "GET", `${demo.root}/customer?a%75th=${key}:1`)).status).to.equal(
        200,
      );
      // V8's JSON.parse error quotes its input (a short one whole): here, the password.
      const parsing = projectClient(platform.baseUrl, "acme", "parsing");
      const failed = await parsing.login({ username: "bob", password: "Zq9-xk7w" });
      expect(failed.status).to.equal(401);
      // A rule's error quotes the row; the client is told, the log is not.
      expect((await demo.post(key, "customer", { name: "x" })).status).to.equal(201);
      const order = await demo.post(key, "purchaseorder", { customer_name: "x", notes: "row-secret-42" });
      expect(order.status).to.equal(500);
      expect(order.body.errorMessage).to.contain("row-secret-42");
      const text = lines.join("\n");
      expect(text).to.contain(`${demo.root}/customer?auth=[redacted]`);
      const secrets = [key, "s3cret-password", "n3w-password!", "wrong-guess-1", platform.adminToken];
      const leaked = [...secrets, "Zq9-xk7w", "row-secret-42"].filter((x) => text.includes(x));
      expect(leaked).to.deep.equal([]);
      // What is logged instead: the kind, the program and a fingerprint of the message.
      const providerFailure = lines
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === "custom authentication provider: login failed");
      expect(providerFailure).to.include({ kind: "script" });
      expect(providerFailure.programKey).to.match(/^acme\/parsing@[0-9a-f-]{36}\/auth$/);
      expect(providerFailure.fingerprint).to.match(/^[0-9a-f]{12}$/);
    });

    it("serves Prometheus metrics with route templates and login outcomes", async () => {
      expect((await call(platform.baseUrl, "GET", "/rest/acme/demo/v1/customer")).status).to.equal(401);
      const data = await call(platform.dataUrl, "GET", "/metrics");
      expect(data.status).to.equal(200);
      expect(data.body).to.contain("http_request_duration_seconds_bucket");
      expect(data.body).to.match(/route="\/rest\/:account\/:project\/:version\/:resource"/);
      expect(data.body).to.match(/tessera_key_validations_total\{[^}]*outcome="valid"[^}]*\} [1-9]/);
      expect(data.body).to.match(/tessera_key_validations_total\{[^}]*outcome="4011"[^}]*\} [1-9]/);
      const auth = await call(platform.authUrl, "GET", "/metrics");
      expect(auth.body).to.match(/tessera_logins_total\{[^}]*outcome="success"[^}]*\} \d+/);
      expect(auth.body).to.match(/tessera_logins_total\{[^}]*outcome="failure"[^}]*\} \d+/);
    });
  });
});
