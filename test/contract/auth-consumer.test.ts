/**
 * Consumer side of the internal-API contract: the auth service's real
 * DataServiceClient against a Pact mock server. Each interaction that passes is
 * written to test/pacts/tessera-auth-tessera-data.json, which
 * test/contract/data-provider.test.ts then replays against the real data service.
 */
import { rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { MatchersV3, PactV4, type V3MockServer } from "@pact-foundation/pact";
import { expect } from "chai";
import type { z } from "zod";
import { createDataServiceClient } from "../../services/auth/src/clients/data-service-client.ts";
import {
  type AdminLoginBody,
  type AuditReportBody,
  type AuthenticateBody,
  accountInfoSchema,
  adminInfoSchema,
  adminLoginBodySchema,
  adminLoginResponseSchema,
  auditReportBodySchema,
  authenticateBodySchema,
  authenticateResponseSchema,
  loginInfoResponseSchema,
  projectSettingsSchema,
} from "../../shared/contracts/internal-api.ts";
import {
  CONSUMER,
  FIXTURE,
  PACT_DIR,
  PACT_FILE,
  PACT_LOG_LEVEL,
  PROVIDER,
  STATES,
} from "./internal-api-pact.ts";

const { eachLike, integer, like, regex, reify, string } = MatchersV3;

/** The consumer's token; the provider test swaps in the data service's real one. */
const TOKEN = "consumer-contract-token";
const { account, project, version, alice, brief } = FIXTURE;
const projectPath = (a: string, p: string) => `/internal/v1/accounts/${a}/projects/${p}`;

/** Every call carries the service credential and a well-formed request id (shared/http/request-context.ts). */
const serviceHeaders = {
  authorization: regex(/^Bearer \S+$/, `Bearer ${TOKEN}`),
  "x-request-id": regex(/^[A-Za-z0-9._-]{1,64}$/, "contract-request-1"),
};

/** ProjectSettings (shared/contracts/internal-api.ts) as the auth service relies on it. */
const projectSettings = {
  account,
  name: project,
  uid: string("6f1c2b0e-3d4a-4e5f-8a9b-0c1d2e3f4a5b"),
  revision: integer(1),
  versions: eachLike(version, 0),
  roles: eachLike("Full access", 0),
  provider: regex(/^(builtin|custom|oidc)$/, "builtin"),
  keyLifetimeSeconds: integer(3600),
  // The built-in provider's: the lock-out counts failures per username.
  identityFields: eachLike("username"),
};

const loginBody = (
  username: string,
  password: string,
  extra: Partial<AuthenticateBody> = {},
): AuthenticateBody => ({
  version,
  payload: { username, password },
  enablePasswordChange: false,
  ...extra,
});

describe("contract: auth service → data service internal API (consumer)", () => {
  const pact = new PactV4({
    consumer: CONSUMER,
    provider: PROVIDER,
    dir: PACT_DIR,
    logLevel: PACT_LOG_LEVEL,
  });
  const client = (mock: V3MockServer, token = TOKEN) => createDataServiceClient(mock.url, token, 5_000);

  before(() => {
    // Pact merges into an existing file: start from nothing so a renamed interaction leaves no stale copy.
    rmSync(PACT_FILE, { force: true });
  });

  describe("GET …/settings", () => {
    it("an existing project: 200 with ProjectSettings", async () => {
      await pact
        .addInteraction()
        .given(STATES.demoWithAlice)
        .uponReceiving("a request for the settings of an existing project")
        .withRequest("GET", `${projectPath(account, project)}/settings`, (b) => b.headers(serviceHeaders))
        .willRespondWith(200, (b) => b.jsonBody(projectSettings))
        .executeTest(async (mock) => {
          const settings = await client(mock).settings(account, project, "contract-request-1");
          expect(settings).to.deep.equal(reify(projectSettings));
        });
    });

    it("a custom provider's project: the identity fields it declares", async () => {
      const { customProject } = FIXTURE;
      const settings = {
        ...projectSettings,
        name: customProject.name,
        provider: "custom",
        identityFields: eachLike(customProject.identityFields[0]),
      };
      await pact
        .addInteraction()
        .given(STATES.customWithIdentityFields)
        .uponReceiving("a request for the settings of a custom provider's project with identity fields")
        .withRequest("GET", `${projectPath(account, customProject.name)}/settings`, (b) =>
          b.headers(serviceHeaders),
        )
        .willRespondWith(200, (b) => b.jsonBody(settings))
        .executeTest(async (mock) => {
          const answer = await client(mock).settings(account, customProject.name, "contract-request-1");
          expect(answer?.identityFields).to.deep.equal(customProject.identityFields);
        });
    });

    it("an oidc provider's project: its provider, and no identity fields (a token names no account)", async () => {
      const { identityFields: _, ...withoutFields } = projectSettings;
      const settings = { ...withoutFields, name: FIXTURE.oidcProject.name, provider: "oidc" };
      await pact
        .addInteraction()
        .given(STATES.oidcProject)
        .uponReceiving("a request for the settings of an oidc provider's project")
        .withRequest("GET", `${projectPath(account, FIXTURE.oidcProject.name)}/settings`, (b) =>
          b.headers(serviceHeaders),
        )
        .willRespondWith(200, (b) => b.jsonBody(settings))
        .executeTest(async (mock) => {
          const answer = await client(mock).settings(account, FIXTURE.oidcProject.name, "contract-request-1");
          expect(answer).to.deep.include({ provider: "oidc" });
          expect(answer?.identityFields).to.equal(undefined);
        });
    });

    it("a missing project: 404, which the client reports as null", async () => {
      await pact
        .addInteraction()
        .given(STATES.noMissingProject)
        .uponReceiving("a request for the settings of a missing project")
        .withRequest("GET", `${projectPath(account, FIXTURE.missingProject)}/settings`, (b) =>
          b.headers(serviceHeaders),
        )
        .willRespondWith(404)
        .executeTest(async (mock) => {
          expect(await client(mock).settings(account, FIXTURE.missingProject, "contract-request-1")).to.equal(
            null,
          );
        });
    });
  });

  describe("GET …/login-info", () => {
    const loginInfo = {
      fields: eachLike({ name: string("username"), display: string("User name"), type: string("text") }),
      links: eachLike(
        { display: string("Forgotten password"), href: string("https://example.com/reset") },
        0,
      ),
    };

    it("an existing project: 200 with fields and links", async () => {
      await pact
        .addInteraction()
        .given(STATES.demoWithAlice)
        .uponReceiving("a request for the login info of an existing project")
        .withRequest("GET", `${projectPath(account, project)}/login-info`, (b) => b.headers(serviceHeaders))
        .willRespondWith(200, (b) => b.jsonBody(loginInfo))
        .executeTest(async (mock) => {
          const info = await client(mock).loginInfo(account, project, "contract-request-1");
          expect(info).to.deep.equal(reify(loginInfo));
        });
    });

    it("a missing project: 404, which the client reports as null", async () => {
      await pact
        .addInteraction()
        .given(STATES.noMissingProject)
        .uponReceiving("a request for the login info of a missing project")
        .withRequest("GET", `${projectPath(account, FIXTURE.missingProject)}/login-info`, (b) =>
          b.headers(serviceHeaders),
        )
        .willRespondWith(404)
        .executeTest(async (mock) => {
          const info = await client(mock).loginInfo(account, FIXTURE.missingProject, "contract-request-1");
          expect(info).to.equal(null);
        });
    });
  });

  describe("POST …/authenticate", () => {
    const authenticate = (
      given: string,
      description: string,
      projectName: string,
      body: AuthenticateBody,
      status: number,
      responseBody?: unknown,
    ) =>
      pact
        .addInteraction()
        .given(given)
        .uponReceiving(description)
        .withRequest("POST", `${projectPath(account, projectName)}/authenticate`, (b) =>
          b.headers(serviceHeaders).jsonBody(body),
        )
        .willRespondWith(status, (b) => {
          if (responseBody !== undefined) b.jsonBody(responseBody);
        })
        .executeTest((mock) => client(mock).authenticate(account, projectName, body, "contract-request-1"));

    it("right credentials: verdict ok with userIdentifier, roles and globals, and the project's settings", async () => {
      const response = {
        project: projectSettings,
        verdict: {
          ok: true,
          userIdentifier: string(alice.username),
          roles: eachLike(alice.roles[0], 0),
          globals: like(alice.globals),
        },
      };
      const answer = await authenticate(
        STATES.demoWithAlice,
        "a login with the right password",
        project,
        loginBody(alice.username, alice.password),
        200,
        response,
      );
      expect(answer).to.deep.equal(reify(response));
    });

    it("a user with a key lifetime of her own: the verdict carries keyLifetimeSeconds", async () => {
      const response = {
        project: projectSettings,
        verdict: {
          ok: true,
          userIdentifier: string(brief.username),
          roles: eachLike(brief.roles[0], 0),
          globals: like(brief.globals),
          keyLifetimeSeconds: integer(brief.keyLifetimeSeconds),
        },
      };
      const answer = await authenticate(
        STATES.demoWithBrief,
        "a login by a user with her own key lifetime",
        project,
        loginBody(brief.username, brief.password),
        200,
        response,
      );
      expect(answer?.verdict).to.include({ ok: true, keyLifetimeSeconds: brief.keyLifetimeSeconds });
    });

    it("a login that asks for a password change: the verdict carries the change's result and message", async () => {
      const response = {
        project: projectSettings,
        verdict: {
          ok: true,
          userIdentifier: string(alice.username),
          roles: eachLike(alice.roles[0], 0),
          globals: like(alice.globals),
          changePasswordResult: regex(/^(success|failure|notSupported)$/, "success"),
          changePasswordMessage: string("The password was changed"),
        },
      };
      const body = loginBody(alice.username, alice.password, { enablePasswordChange: true });
      body.payload = { ...body.payload, newPassword: FIXTURE.newPassword };
      const answer = await authenticate(
        STATES.demoWithAlice,
        "a login with a password change",
        project,
        body,
        200,
        response,
      );
      expect(answer?.verdict).to.include({ ok: true, changePasswordResult: "success" });
    });

    it("wrong credentials: verdict ok:false with a message", async () => {
      const response = { project: projectSettings, verdict: { ok: false, message: string("Login failed") } };
      const answer = await authenticate(
        STATES.demoWithAlice,
        "a login with a wrong password",
        project,
        loginBody(alice.username, FIXTURE.wrongPassword),
        200,
        response,
      );
      expect(answer?.verdict).to.deep.equal({ ok: false, message: "Login failed" });
    });

    it("a missing project: 404, which the client reports as null", async () => {
      const answer = await authenticate(
        STATES.noMissingProject,
        "a login to a missing project",
        FIXTURE.missingProject,
        loginBody(alice.username, alice.password),
        404,
      );
      expect(answer).to.equal(null);
    });

    it("a missing API version: 404, which the client reports as null", async () => {
      const answer = await authenticate(
        STATES.demoWithAlice,
        "a login to a missing API version",
        project,
        loginBody(alice.username, alice.password, { version: FIXTURE.missingVersion }),
        404,
      );
      expect(answer).to.equal(null);
    });
  });

  describe("account administration", () => {
    const { admin, missingAccount } = FIXTURE;
    const accountPath = (a: string) => `/internal/v1/accounts/${a}`;
    /** AdminInfo (shared/contracts/internal-api.ts): never a password hash. */
    const adminInfo = {
      login: admin.login,
      role: regex(/^(admin|reader)$/, admin.role),
      accountUid: string("2b7c0d4e-5f61-4a8b-9c0d-1e2f3a4b5c6d"),
      credentialStamp: string("Xy3kP0qLr8sT2uVw"),
    };
    const adminLogin = (
      given: string,
      description: string,
      to: string,
      body: AdminLoginBody,
      responseBody: unknown,
    ) =>
      pact
        .addInteraction()
        .given(given)
        .uponReceiving(description)
        .withRequest("POST", `${accountPath(to)}/admin-login`, (b) =>
          b.headers(serviceHeaders).jsonBody(body),
        )
        .willRespondWith(200, (b) => b.jsonBody(responseBody))
        .executeTest((mock) => client(mock).adminLogin(to, body, "contract-request-1"));
    const credentials = (password: string, extra: Record<string, unknown> = {}): AdminLoginBody => ({
      payload: { username: admin.login, password, ...extra },
      enablePasswordChange: false,
    });

    it("GET …/accounts/{a}: 200 with the account's incarnation", async () => {
      const body = { name: account, uid: string("2b7c0d4e-5f61-4a8b-9c0d-1e2f3a4b5c6d") };
      await pact
        .addInteraction()
        .given(STATES.acmeWithAdmin)
        .uponReceiving("a request for an existing account")
        .withRequest("GET", accountPath(account), (b) => b.headers(serviceHeaders))
        .willRespondWith(200, (b) => b.jsonBody(body))
        .executeTest(async (mock) => {
          expect(await client(mock).account(account, "contract-request-1")).to.deep.equal(reify(body));
        });
    });

    it("GET …/accounts/{a} of a missing account: 404, which the client reports as null", async () => {
      await pact
        .addInteraction()
        .given(STATES.noMissingAccount)
        .uponReceiving("a request for a missing account")
        .withRequest("GET", accountPath(missingAccount), (b) => b.headers(serviceHeaders))
        .willRespondWith(404)
        .executeTest(async (mock) => {
          expect(await client(mock).account(missingAccount, "contract-request-1")).to.equal(null);
        });
    });

    it("GET …/admins/{login}: 200 with the administrator as stored now", async () => {
      await pact
        .addInteraction()
        .given(STATES.acmeWithAdmin)
        .uponReceiving("a request for an existing administrator")
        .withRequest("GET", `${accountPath(account)}/admins/${admin.login}`, (b) => b.headers(serviceHeaders))
        .willRespondWith(200, (b) => b.jsonBody(adminInfo))
        .executeTest(async (mock) => {
          const answer = await client(mock).admin(account, admin.login, "contract-request-1");
          expect(answer).to.deep.equal(reify(adminInfo));
        });
    });

    it("GET …/admins/{login} of a missing administrator: 404, which the client reports as null", async () => {
      await pact
        .addInteraction()
        .given(STATES.acmeWithAdmin)
        .uponReceiving("a request for a missing administrator")
        .withRequest("GET", `${accountPath(account)}/admins/nobody`, (b) => b.headers(serviceHeaders))
        .willRespondWith(404)
        .executeTest(async (mock) => {
          expect(await client(mock).admin(account, "nobody", "contract-request-1")).to.equal(null);
        });
    });

    it("POST …/admin-login, right password: verdict ok with the administrator", async () => {
      const response = { verdict: { ok: true, ...adminInfo } };
      const answer = await adminLogin(
        STATES.acmeWithAdmin,
        "an administrator's login with the right password",
        account,
        credentials(admin.password),
        response,
      );
      expect(answer).to.deep.equal(reify(response));
    });

    it("POST …/admin-login with a password change: the verdict carries its result and message", async () => {
      const response = {
        verdict: {
          ok: true,
          ...adminInfo,
          changePasswordResult: regex(/^(success|failure)$/, "success"),
          changePasswordMessage: string("The password was changed"),
        },
      };
      const body = {
        ...credentials(admin.password, { newPassword: FIXTURE.newAdminPassword }),
        enablePasswordChange: true,
      };
      const answer = await adminLogin(
        STATES.acmeWithAdmin,
        "an administrator's login with a password change",
        account,
        body,
        response,
      );
      expect(answer?.verdict).to.include({ ok: true, changePasswordResult: "success" });
    });

    it("POST …/admin-login, wrong password: verdict ok:false", async () => {
      const response = { verdict: { ok: false, message: string("Login failed") } };
      const answer = await adminLogin(
        STATES.acmeWithAdmin,
        "an administrator's login with a wrong password",
        account,
        credentials(FIXTURE.wrongPassword),
        response,
      );
      expect(answer?.verdict.ok).to.equal(false);
    });

    it("POST …/admin-login to a missing account: 200 and a failed verdict, as for a wrong password", async () => {
      const response = { verdict: { ok: false, message: string("Login failed") } };
      const answer = await adminLogin(
        STATES.noMissingAccount,
        "an administrator's login to a missing account",
        missingAccount,
        credentials(admin.password),
        response,
      );
      expect(answer?.verdict.ok).to.equal(false);
    });

    it("POST …/audit: 204, the report is stored", async () => {
      const report: AuditReportBody = {
        actor: { kind: "admin", login: admin.login, role: "admin" },
        method: "POST",
        path: `/admin/v1/accounts/${account}/projects/${project}/apikeys`,
        summary: "key 'nightly' created",
        status: 201,
        requestId: "contract-request-1",
      };
      await pact
        .addInteraction()
        .given(STATES.acmeWithAdmin)
        .uponReceiving("an audit report of a change the auth service made")
        .withRequest("POST", `${accountPath(account)}/audit`, (b) =>
          b.headers(serviceHeaders).jsonBody(report),
        )
        .willRespondWith(204)
        .executeTest(async (mock) => {
          await client(mock).reportAudit(account, report);
        });
    });
  });

  describe("the contract pins the request headers", () => {
    /** Runs a call the mock server must reject; resolves to Pact's mismatch report. */
    const mismatch = async (call: (mock: V3MockServer) => Promise<unknown>) => {
      try {
        await pact
          .addInteraction()
          .given(STATES.demoWithAlice)
          .uponReceiving("a header check that must not be written to the pact")
          .withRequest("GET", `${projectPath(account, project)}/settings`, (b) => b.headers(serviceHeaders))
          .willRespondWith(200, (b) => b.jsonBody(projectSettings))
          // The mock answers a mismatched request with 500 and the client throws: swallow that,
          // so that Pact reports the mismatch itself.
          .executeTest((mock) => call(mock).catch(() => undefined));
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error("the mock server accepted a request the contract should refuse");
    };

    it("a request without the service credential does not match", async () => {
      const report = await mismatch((mock) =>
        client(mock, "").settings(account, project, "contract-request-1"),
      );
      expect(report).to.include("Mismatch with header 'authorization'");
    });

    it("a request without a well-formed x-request-id does not match", async () => {
      const report = await mismatch((mock) => client(mock).settings(account, project, "not a request id!"));
      expect(report).to.include("Mismatch with header 'x-request-id'");
    });
  });

  describe("the pact file", () => {
    it("holds every interaction above, each with a provider state the provider test knows", async () => {
      const pactJson = JSON.parse(await readFile(PACT_FILE, "utf8")) as {
        consumer: { name: string };
        provider: { name: string };
        interactions: { description: string; providerStates?: { name: string }[] }[];
        metadata: { pactSpecification: { version: string } };
      };
      expect(pactJson.consumer.name).to.equal(CONSUMER);
      expect(pactJson.provider.name).to.equal(PROVIDER);
      expect(pactJson.metadata.pactSpecification.version).to.match(/^4\./);
      expect(pactJson.interactions).to.have.length(21);
      expect(pactJson.interactions.map((i) => i.description)).to.not.include(
        "a header check that must not be written to the pact",
      );
      const known: string[] = Object.values(STATES);
      for (const i of pactJson.interactions) {
        expect(i.providerStates?.map((s) => s.name)).to.satisfy((names: string[]) =>
          names.every((n) => known.includes(n)),
        );
      }
    });

    it("every request and answer it holds is in the contract's schemas (shared/contracts/internal-api.ts)", async () => {
      interface Body {
        content?: unknown;
      }
      const pactJson = JSON.parse(await readFile(PACT_FILE, "utf8")) as {
        interactions: {
          description: string;
          request: { method: string; path: string; body?: Body };
          response: { status: number; body?: Body };
        }[];
      };
      /** The schemas of a route's request body and 200 answer, by method and path. */
      const ROUTES: [string, RegExp, z.ZodType | undefined, z.ZodType | undefined][] = [
        ["GET", /\/projects\/[^/]+\/settings$/, undefined, projectSettingsSchema],
        ["GET", /\/projects\/[^/]+\/login-info$/, undefined, loginInfoResponseSchema],
        ["POST", /\/projects\/[^/]+\/authenticate$/, authenticateBodySchema, authenticateResponseSchema],
        ["GET", /^\/internal\/v1\/accounts\/[^/]+$/, undefined, accountInfoSchema],
        ["GET", /\/admins\/[^/]+$/, undefined, adminInfoSchema],
        ["POST", /\/admin-login$/, adminLoginBodySchema, adminLoginResponseSchema],
        ["POST", /\/audit$/, auditReportBodySchema, undefined],
      ];
      for (const { description, request, response } of pactJson.interactions) {
        const route = ROUTES.find(([method, path]) => method === request.method && path.test(request.path));
        expect(route, description).to.not.equal(undefined);
        const [, , requestSchema, answerSchema] = route!;
        if (requestSchema)
          expect(requestSchema.safeParse(request.body?.content).error, description).to.equal(undefined);
        if (answerSchema && response.status === 200)
          expect(answerSchema.safeParse(response.body?.content).error, description).to.equal(undefined);
      }
    });
  });
});
