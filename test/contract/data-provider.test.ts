/**
 * Provider side of the internal-API contract: replays the pact the
 * consumer test wrote (test/pacts/) against the real data service — built by
 * createDataService on the real test stores, listening on a loopback port — with
 * each provider state set up through the service's own admin API.
 */
import { existsSync, readFileSync } from "node:fs";
import http, { type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Verifier } from "@pact-foundation/pact";
import { expect } from "chai";
import { createDataService, type DataService } from "../../services/data/src/service.ts";
import { dataConfigSchema, parseConfig } from "../../shared/config/config.ts";
import { createLogger } from "../../shared/logger.ts";
import { demoProject } from "../fixtures/demo-project.ts";
import { adminClient, type Reply } from "../support/http.ts";
import { dropDatabases } from "../support/platform.ts";
import { isolationPrefix, testStores } from "../support/stores.ts";
import { FIXTURE, PACT_FILE, PACT_LOG_LEVEL, PROVIDER, STATES } from "./internal-api-pact.ts";

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Fails a state set-up loudly: a state that silently did not happen makes a confusing verification failure. */
function ensure(reply: Reply, what: string, accepted = [200, 201]): void {
  if (!accepted.includes(reply.status))
    throw new Error(`provider state: ${what} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
}

/** Pact rejects with its whole JSON report as the message: keep the interactions and their mismatches. */
function summarise(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  try {
    const report = JSON.parse(message) as {
      errors?: { interaction: string; mismatch?: { mismatches?: { mismatch?: string }[] } }[];
    };
    const lines = (report.errors ?? []).flatMap((e) => [
      e.interaction,
      ...(e.mismatch?.mismatches ?? []).map((m) => `    ${m.mismatch ?? JSON.stringify(m)}`),
    ]);
    return lines.length > 0 ? `The data service breaks the pact:\n  ${lines.join("\n  ")}` : message;
  } catch {
    return message;
  }
}

describe("contract: data service internal API (provider)", () => {
  let data: DataService;
  let server: Server;
  let dataUrl: string;
  let prefix: string;
  let serviceToken: string;
  let admin: ReturnType<typeof adminClient>;

  before(async function () {
    this.timeout(60_000); // the first test to ask may start FerretDB and Redis
    if (!existsSync(PACT_FILE)) {
      throw new Error(
        `No pact at ${PACT_FILE}: run test/contract/auth-consumer.test.ts first (before this file, in the same mocha run)`,
      );
    }
    const { mongoUrl, redisEnv } = await testStores();
    prefix = isolationPrefix();
    const adminToken = `admin-${prefix}`;
    serviceToken = `service-${prefix}`;
    const config = parseConfig(dataConfigSchema, {
      MONGO_URL: mongoUrl,
      META_DB: `${prefix}meta`,
      TENANT_DB_PREFIX: prefix,
      ...redisEnv,
      REDIS_PREFIX: `tessera-test:${prefix}`,
      ADMIN_TOKEN: adminToken,
      SERVICE_TOKEN: serviceToken,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
      ARGON2_MEMORY_KIB: "1024",
    });
    data = await createDataService(config, createLogger("data", config.LOG_LEVEL));
    server = http.createServer(data.app.callback());
    dataUrl = await listen(server);
    admin = adminClient(dataUrl, adminToken);
  });

  after(async () => {
    if (server) await closeServer(server);
    if (!data) return;
    await dropDatabases(data.deps.tenants, prefix);
    await data.close();
  });

  const { account, project, alice, brief } = FIXTURE;
  /** Idempotent: every interaction's state is set up afresh (a password change is undone, and so on). */
  const demoExists = async () => {
    ensure(await admin.putAccount(account), `PUT account ${account}`);
    ensure(await admin.putProject(account, project, demoProject()), `PUT project ${account}/${project}`);
    const { username, ...user } = alice;
    ensure(await admin.putUser(account, project, username, user), `PUT user ${username}`);
  };
  const stateHandlers: Record<string, () => Promise<void>> = {
    [STATES.demoWithAlice]: demoExists,
    [STATES.demoWithBrief]: async () => {
      await demoExists();
      const { username, ...user } = brief;
      ensure(await admin.putUser(account, project, username, user), `PUT user ${username}`);
    },
    [STATES.customWithIdentityFields]: async () => {
      ensure(await admin.putAccount(account), `PUT account ${account}`);
      const { name, identityFields } = FIXTURE.customProject;
      const definition = demoProject({
        authentication: {
          provider: "custom",
          library: "mail",
          createFunction: "mailCreate",
          identityFields,
        },
        libraries: {
          mail: {
            code: "function mailCreate() { return { authenticate() { return { errorMessage: 'no' }; } }; }",
          },
        },
      });
      ensure(await admin.putProject(account, name, definition), `PUT project ${account}/${name}`);
    },
    [STATES.oidcProject]: async () => {
      ensure(await admin.putAccount(account), `PUT account ${account}`);
      const { name, issuer, audience } = FIXTURE.oidcProject;
      const definition = demoProject({ authentication: { provider: "oidc", oidc: { issuer, audience } } });
      ensure(await admin.putProject(account, name, definition), `PUT project ${account}/${name}`);
    },
    [STATES.acmeWithAdmin]: async () => {
      ensure(await admin.putAccount(account), `PUT account ${account}`);
      const { login, password, role } = FIXTURE.admin;
      ensure(
        await admin.send("PUT", `/accounts/${account}/admins/${login}`, { password, role }),
        `PUT admin ${login}`,
      );
    },
    [STATES.noMissingAccount]: async () => {
      const reply = await admin.send("DELETE", `/accounts/${FIXTURE.missingAccount}`);
      ensure(reply, `DELETE account ${FIXTURE.missingAccount}`, [200, 404]);
    },
    [STATES.noMissingProject]: async () => {
      ensure(await admin.putAccount(account), `PUT account ${account}`);
      const reply = await admin.send("DELETE", `/accounts/${account}/projects/${FIXTURE.missingProject}`);
      ensure(reply, `DELETE project ${account}/${FIXTURE.missingProject}`, [200, 404]);
    },
  };

  it("has a state handler for every provider state the pact names", () => {
    const pact = JSON.parse(readFileSync(PACT_FILE, "utf8")) as {
      interactions: { providerStates?: { name: string }[] }[];
    };
    const named = new Set(pact.interactions.flatMap((i) => (i.providerStates ?? []).map((s) => s.name)));
    expect([...named].filter((n) => !Object.hasOwn(stateHandlers, n))).to.deep.equal([]);
  });

  it("honours every interaction of the auth service's pact", async () => {
    const verifier = new Verifier({
      provider: PROVIDER,
      providerBaseUrl: dataUrl,
      pactUrls: [PACT_FILE],
      stateHandlers,
      // The pact holds the consumer's placeholder credential: present the real one instead.
      requestFilter: (req: IncomingMessage, _res: ServerResponse, next: () => void) => {
        if (req.url?.startsWith("/internal/") && req.headers.authorization !== undefined)
          req.headers.authorization = `Bearer ${serviceToken}`;
        next();
      },
      failIfNoPactsFound: true,
      logLevel: PACT_LOG_LEVEL,
    });
    try {
      await verifier.verifyProvider();
    } catch (err) {
      throw new Error(summarise(err));
    }
  });
});
