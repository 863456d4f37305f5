/**
 * The identity-service sample provider and `tessera.fetchJson`, against a real
 * HTTP identity server on 127.0.0.1 (allowLoopbackFetch: true, 127.0.0.1 on the
 * allow-list): login, groups to roles, userData to globals, password change,
 * and the fetch limits (no redirects, response size, time).
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import {
  type CustomProviderOptions,
  createCustomProvider,
  GENERIC_LOGIN_FAILURE,
} from "../../../services/data/src/providers/custom-provider.ts";
import {
  createFetchJson,
  ProcessSandboxPool,
  SandboxError,
} from "../../../services/data/src/sandbox/index.ts";
import { memoryLogger, timed } from "../../unit/sandbox/support.ts";

const code = readFileSync(
  new URL("../../../examples/providers/identity-service/identity-service.js", import.meta.url),
  "utf8",
);

interface Seen {
  method: string;
  url: string;
  host: string | undefined;
  body: string;
}

/** A small identity service: users, groups, user data, password changes, and some misbehaving routes. */
async function startIdentityServer() {
  const users: Record<
    string,
    { password: string; groups: string[]; userData: Record<string, unknown>; displayName: string }
  > = {
    alice: {
      password: "alice-pw",
      groups: ["sales", "staff"],
      userData: { region: "EU", employeeId: 7 },
      displayName: "Alice Archer",
    },
    bob: { password: "bob-pw", groups: ["admins"], userData: { region: "US" }, displayName: "Bob Baker" },
  };
  const seen: Seen[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ method: req.method ?? "", url: req.url ?? "", host: req.headers.host, body });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      const parsed = (): Record<string, string> => {
        try {
          return JSON.parse(body) as Record<string, string>;
        } catch {
          return {};
        }
      };
      switch (req.url) {
        case "/api/authenticate": {
          const { username, password } = parsed();
          const user = users[username!];
          if (!user || user.password !== password)
            return json(200, { ok: false, message: "Bad credentials" });
          return json(200, {
            ok: true,
            groups: user.groups,
            userData: user.userData,
            displayName: user.displayName,
          });
        }
        case "/api/password": {
          const { username, password, newPassword } = parsed();
          const user = users[username!];
          if (!user || user.password !== password)
            return json(403, { ok: false, message: "Bad credentials" });
          if (typeof newPassword !== "string" || newPassword.length < 6) {
            return json(200, { ok: false, message: "The new password is too short" });
          }
          user.password = newPassword;
          return json(200, { ok: true });
        }
        case "/redirect":
          res.writeHead(302, { location: "http://10.0.0.1/secret" });
          return res.end();
        case "/big":
          return json(200, { blob: "x".repeat(2 * 1024 * 1024) });
        case "/big-chunked": {
          res.writeHead(200, { "content-type": "application/json" });
          const piece = "y".repeat(64 * 1024);
          let n = 0;
          const write = () => {
            if (n++ < 40 && !res.destroyed) res.write(piece, () => setImmediate(write));
            else res.end();
          };
          return write();
        }
        case "/slow": {
          const t = setTimeout(() => json(200, { late: true }), 3000);
          timers.add(t);
          return;
        }
        case "/text":
          res.writeHead(200, { "content-type": "text/plain" });
          return res.end("plain words");
        case "/empty-json":
          res.writeHead(204, { "content-type": "application/json" });
          return res.end();
        case "/bad-json":
          res.writeHead(200, { "content-type": "application/json" });
          return res.end("{not json");
        case "/echo":
          return json(200, {
            method: req.method,
            host: req.headers.host,
            contentType: req.headers["content-type"],
            body,
          });
        default:
          return json(404, { ok: false });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    users,
    seen,
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("sample provider: identity service (real HTTP)", function () {
  this.timeout(30_000);
  let idp: Awaited<ReturnType<typeof startIdentityServer>>;
  let pool: ProcessSandboxPool;
  let logger: ReturnType<typeof memoryLogger>;

  before(async () => {
    idp = await startIdentityServer();
  });

  after(async () => {
    await idp.close();
  });

  beforeEach(async () => {
    pool = new ProcessSandboxPool({ allowLoopbackFetch: true, timeoutMs: 2000 });
    await pool.ready();
    logger = memoryLogger();
  });

  afterEach(async () => {
    await pool.close();
  });

  function options(over: Partial<CustomProviderOptions> = {}): CustomProviderOptions {
    return {
      pool,
      programKey: "acme/crm/auth",
      libraryCode: code,
      libraryName: "identityService",
      createFunction: "identityServiceCreate",
      config: { baseUrl: `${idp.base}/api`, groupRoles: { sales: "Region reader", admins: "Full access" } },
      projectRoles: ["Full access", "Region reader"],
      exposeProviderMessages: false,
      allowedHosts: ["127.0.0.1"],
      logger,
      ...over,
    };
  }

  describe("login", () => {
    it("maps groups to roles, userData to globals, displayName to userInfo", async () => {
      const provider = createCustomProvider(options());
      const verdict = await provider.authenticate({
        payload: { username: "alice", password: "alice-pw" },
        enablePasswordChange: false,
      });
      expect(verdict).to.deep.equal({
        ok: true,
        userIdentifier: "alice",
        roles: ["Region reader"],
        globals: { region: "EU", employeeId: 7 },
        keyLifetimeSeconds: 3600,
        userInfo: { displayName: "Alice Archer" },
      });
      const request = idp.seen.filter((s) => s.url === "/api/authenticate").at(-1)!;
      expect(request.method).to.equal("POST");
      expect(request.host).to.equal(`127.0.0.1:${idp.port}`);
      expect(JSON.parse(request.body)).to.deep.equal({ username: "alice", password: "alice-pw" });
      expect(
        await provider.authenticate({
          payload: { username: "bob", password: "bob-pw" },
          enablePasswordChange: false,
        }),
      ).to.include({ ok: true });
    });

    it("uses group names as roles when no groupRoles are configured", async () => {
      const provider = createCustomProvider(
        options({ config: { baseUrl: `${idp.base}/api` }, projectRoles: ["sales", "staff"] }),
      );
      const verdict = await provider.authenticate({
        payload: { username: "alice", password: "alice-pw" },
        enablePasswordChange: false,
      });
      expect(verdict.ok && verdict.roles).to.deep.equal(["sales", "staff"]);
    });

    it("refuses wrong credentials (generic message, or the service's when exposed)", async () => {
      const payload = { username: "alice", password: "wrong" };
      expect(
        await createCustomProvider(options()).authenticate({ payload, enablePasswordChange: false }),
      ).to.deep.equal({
        ok: false,
        message: GENERIC_LOGIN_FAILURE,
      });
      const exposed = createCustomProvider(options({ exposeProviderMessages: true }));
      expect(await exposed.authenticate({ payload, enablePasswordChange: false })).to.deep.equal({
        ok: false,
        message: "Bad credentials",
      });
      expect(logger.text()).to.not.contain("wrong");
    });

    it("fails cleanly when the service is not reachable or not allowed", async () => {
      const payload = { username: "alice", password: "alice-pw" };
      const notAllowed = createCustomProvider(
        options({ allowedHosts: ["id.example.com"], exposeProviderMessages: true }),
      );
      expect(await notAllowed.authenticate({ payload, enablePasswordChange: false })).to.deep.equal({
        ok: false,
        message: "The identity service could not be reached",
      });
      const down = createCustomProvider(
        options({ config: { baseUrl: "http://127.0.0.1:1/api" }, exposeProviderMessages: true }),
      );
      expect(await down.authenticate({ payload, enablePasswordChange: false })).to.deep.equal({
        ok: false,
        message: "The identity service could not be reached",
      });
      const strictPool = new ProcessSandboxPool({ allowLoopbackFetch: false });
      try {
        await strictPool.ready();
        const strict = createCustomProvider(options({ pool: strictPool }));
        expect(await strict.authenticate({ payload, enablePasswordChange: false })).to.deep.equal({
          ok: false,
          message: GENERIC_LOGIN_FAILURE,
        });
      } finally {
        await strictPool.close();
      }
    });
  });

  describe("password change", () => {
    it("changes the password when asked, and reports failures with the service's reason", async () => {
      const provider = createCustomProvider(options());
      const changed = await provider.authenticate({
        payload: { username: "bob", password: "bob-pw", newPassword: "bob-pw-2" },
        enablePasswordChange: true,
      });
      expect(changed).to.include({
        ok: true,
        changePasswordResult: "success",
        changePasswordMessage: "Your password was changed",
      });
      expect(idp.users.bob!.password).to.equal("bob-pw-2");
      expect(
        await provider.authenticate({
          payload: { username: "bob", password: "bob-pw" },
          enablePasswordChange: false,
        }),
      ).to.include({ ok: false });
      const again = await provider.authenticate({
        payload: { username: "bob", password: "bob-pw-2", new_password: "short" },
        enablePasswordChange: true,
      });
      expect(again).to.include({
        ok: true,
        changePasswordResult: "failure",
        changePasswordMessage: "The new password is too short",
      });
      expect(idp.users.bob!.password).to.equal("bob-pw-2");
      const missing = await provider.authenticate({
        payload: { username: "bob", password: "bob-pw-2" },
        enablePasswordChange: true,
      });
      expect(missing).to.include({ ok: true, changePasswordResult: "failure" });
      // without ?enablePasswordChange! nothing is changed and no result is reported
      const plain = await provider.authenticate({
        payload: { username: "bob", password: "bob-pw-2", newPassword: "ignored-pw" },
        enablePasswordChange: false,
      });
      expect(plain).to.not.have.property("changePasswordResult");
      expect(idp.users.bob!.password).to.equal("bob-pw-2");
    });
  });

  describe("tessera.fetchJson limits", () => {
    function fetchProgram(
      over: { allowedHosts?: string[]; resolve?: Parameters<typeof createFetchJson>[0]["resolve"] } = {},
    ) {
      return pool.program(
        `fetch/${Math.random()}`,
        "async function get(url, init) { return await tessera.fetchJson(url, init) }",
        {
          hostFunctions: {
            "tessera.fetchJson": createFetchJson({
              allowedHosts: over.allowedHosts ?? ["127.0.0.1"],
              allowLoopback: pool.allowLoopbackFetch,
              resolve: over.resolve,
            }),
          },
        },
      );
    }

    async function failure(p: Promise<unknown>): Promise<string> {
      try {
        await p;
      } catch (e) {
        expect(e).to.be.instanceOf(SandboxError);
        expect((e as SandboxError).kind).to.equal("script");
        return (e as SandboxError).message;
      }
      throw new Error("expected the fetch to fail");
    }

    it("returns a 3xx as it is, without following it", async () => {
      const before = idp.seen.length;
      const res = (await fetchProgram().call("get", [`${idp.base}/redirect`])) as {
        status: number;
        headers: Record<string, string>;
      };
      expect(res.status).to.equal(302);
      expect(res.headers.location).to.equal("http://10.0.0.1/secret");
      expect(idp.seen.length).to.equal(before + 1);
    });

    it("refuses a response larger than the cap (declared or streamed)", async () => {
      const p = fetchProgram();
      expect(await failure(p.call("get", [`${idp.base}/big`]))).to.match(/larger than 1048576 bytes/);
      expect(await failure(p.call("get", [`${idp.base}/big-chunked`]))).to.match(/larger than 1048576 bytes/);
      expect(await p.call("get", [`${idp.base}/text`])).to.deep.include({ status: 200, body: "plain words" });
    });

    it("gives up on a slow response at its time cap", async () => {
      const p = fetchProgram();
      // The server answers after 3 s and the call may take 2 s: the message names the fetch's own cap.
      const { ms, error } = await timed(() => p.call("get", [`${idp.base}/slow`, { timeoutMs: 300 }]));
      expect((error as SandboxError).message).to.match(/no complete response within 300 ms/);
      expect(ms, "not before its cap").to.be.at.least(250);
      // the call's own deadline caps the fetch too
      const capped = await timed(() => p.call("get", [`${idp.base}/slow`], { timeoutMs: 400 }));
      expect(capped.error).to.be.instanceOf(SandboxError);
    });

    it("parses JSON bodies, passes text, sends JSON or text bodies", async () => {
      const p = fetchProgram();
      const echoed = (await p.call("get", [`${idp.base}/echo`, { method: "put", body: { a: [1, 2] } }])) as {
        body: Record<string, unknown>;
      };
      expect(echoed.body).to.deep.equal({
        method: "PUT",
        host: `127.0.0.1:${idp.port}`,
        contentType: "application/json",
        body: '{"a":[1,2]}',
      });
      const text = (await p.call("get", [
        `${idp.base}/echo`,
        { method: "POST", body: "hi", headers: { "X-Trace": "1" } },
      ])) as {
        body: Record<string, unknown>;
      };
      expect(text.body).to.include({ contentType: "text/plain; charset=utf-8", body: "hi" });
      expect(await p.call("get", [`${idp.base}/empty-json`])).to.deep.include({ status: 204, body: null });
      expect(await failure(p.call("get", [`${idp.base}/bad-json`]))).to.match(/does not parse/);
      expect(await failure(p.call("get", [`${idp.base}/echo`, { headers: { Host: "evil" } }]))).to.match(
        /cannot be set/,
      );
      expect(
        await failure(p.call("get", [`${idp.base}/echo`, { headers: { "X-A": "1\r\nX-B: 2" } }])),
      ).to.match(/invalid value/);
      expect(await failure(p.call("get", [`${idp.base}/echo`, { method: "CONNECT" }]))).to.match(
        /not allowed/,
      );
      expect(await failure(p.call("get", [`${idp.base}/echo`, { body: "x" }]))).to.match(
        /cannot have a body/,
      );
    });

    it("connects to the address it checked (DNS answers are pinned), with the host name in Host", async () => {
      let lookups = 0;
      const p = fetchProgram({
        allowedHosts: ["identity.test"],
        resolve: async () => {
          lookups++;
          return [{ address: "127.0.0.1", family: 4 }];
        },
      });
      const res = (await p.call("get", [`http://identity.test:${idp.port}/echo`])) as {
        body: { host: string };
      };
      expect(res.body.host).to.equal(`identity.test:${idp.port}`);
      expect(lookups).to.equal(1);
      // one bad address among the answers is enough to refuse
      const mixed = fetchProgram({
        allowedHosts: ["identity.test"],
        resolve: async () => [
          { address: "127.0.0.1", family: 4 },
          { address: "10.1.2.3", family: 4 },
        ],
      });
      expect(await failure(mixed.call("get", [`http://identity.test:${idp.port}/echo`]))).to.match(
        /private address/,
      );
    });

    it("limits the number of requests in one call", async () => {
      const p = pool.program(
        "fetch/many",
        "async function many(url) { for (let i = 0; i < 25; i++) await tessera.fetchJson(url); return 'done' }",
        {
          hostFunctions: {
            "tessera.fetchJson": createFetchJson({ allowedHosts: ["127.0.0.1"], allowLoopback: true }),
          },
        },
      );
      expect(await failure(p.call("many", [`${idp.base}/text`]))).to.match(/more than 20 requests/);
    });
  });
});
