/**
 * Who may do what on the admin API, as a table: two accounts × seven callers
 * (the operator, an admin and a reader of the first account, an admin of the
 * second, a project's API key, a disabled admin key, no credential) × every
 * admin route and verb, each cell asserted through the edge on the real
 * stores. An administrator addressing the other account gets exactly the answer
 * of an account that does not exist.
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminAuthentication, adminKey, putAdmin, withoutRequestId } from "../../support/admins.ts";
import { adminClient, call, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const A = "alpha";
const B = "beta";
const ACCOUNTS = [A, B] as const;
type Account = (typeof ACCOUNTS)[number];

const CALLERS = ["operator", "adminA", "readerA", "adminB", "projectKey", "disabledAdmin", "none"] as const;
type Caller = (typeof CALLERS)[number];

interface Request {
  method: string;
  path: string;
  body?: unknown;
}

interface Route {
  name: string;
  method: "GET" | "PUT" | "POST" | "DELETE";
  /** Status of a caller allowed to do it. */
  success: number;
  /** Creating and deleting accounts, and routes outside every account, are the operator's. */
  operatorOnly?: boolean;
  /** Outside every account (GET /admin/v1/audit). */
  platform?: boolean;
  /** Runs as the operator before the cell; answers the request. */
  prepare: (account: Account) => Promise<Request>;
}

interface Expected {
  status: number;
  errorCode?: number;
  body?: Record<string, unknown>;
}

describe("admin API access matrix", function () {
  this.timeout(120_000);
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  const credentials = new Map<Caller, string | undefined>();
  let seq = 0;
  const unique = (stem: string) => `${stem}${++seq}`;

  const home: Partial<Record<Caller, Account>> = { adminA: A, readerA: A, adminB: B };
  const expectOk = (r: Reply, what: string) =>
    expect(r.status, `${what}: ${JSON.stringify(r.body)}`).to.be.within(200, 201);

  /** A public address literal: the egress policy lets it through without resolving a name. */
  const HOOK = { url: "https://93.184.215.14/hook", tables: ["customer"] };
  /** A fresh webhook subscription of the account's project, made by the operator. */
  const webhook = async (a: Account) => {
    const r = await operator.send("POST", `${project(a)}/webhooks`, HOOK);
    expectOk(r, "create webhook");
    return r.body.id as string;
  };
  const account = (a: Account) => `/accounts/${a}`;
  const project = (a: Account) => `${account(a)}/projects/demo`;
  const routes: Route[] = [
    {
      name: "read the account",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: account(a) }),
    },
    {
      name: "rename the account",
      method: "PUT",
      success: 200,
      prepare: async (a) => ({ method: "PUT", path: account(a), body: { displayName: unique("name ") } }),
    },
    {
      name: "list admins",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${account(a)}/admins` }),
    },
    {
      name: "create an admin",
      method: "PUT",
      success: 201,
      prepare: async (a) => ({
        method: "PUT",
        path: `${account(a)}/admins/${unique("new")}`,
        body: { password: "new-admin-password", role: "reader" },
      }),
    },
    {
      name: "read an admin",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${account(a)}/admins/${a === A ? "ann" : "ben"}` }),
    },
    {
      name: "delete an admin",
      method: "DELETE",
      success: 200,
      prepare: async (a) => {
        const login = unique("victim");
        await putAdmin(operator, a, login, "reader", "victim-password");
        return { method: "DELETE", path: `${account(a)}/admins/${login}` };
      },
    },
    {
      name: "list projects",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${account(a)}/projects` }),
    },
    {
      name: "create a project",
      method: "PUT",
      success: 201,
      prepare: async (a) => ({
        method: "PUT",
        path: `${account(a)}/projects/${unique("p")}`,
        body: demoProject(),
      }),
    },
    {
      name: "read a project",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: project(a) }),
    },
    {
      name: "delete a project",
      method: "DELETE",
      success: 200,
      prepare: async (a) => {
        const name = unique("doomed");
        expectOk(await operator.putProject(a, name, demoProject()), "create project");
        return { method: "DELETE", path: `${account(a)}/projects/${name}` };
      },
    },
    {
      name: "dry-run a definition",
      method: "PUT",
      success: 200,
      prepare: async (a) => ({ method: "PUT", path: `${project(a)}?dryRun=true`, body: demoProject() }),
    },
    {
      name: "list revisions",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${project(a)}/revisions` }),
    },
    {
      name: "read a revision",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${project(a)}/revisions/1` }),
    },
    {
      name: "roll back",
      method: "POST",
      success: 200,
      prepare: async (a) => ({ method: "POST", path: `${project(a)}/rollback`, body: { revision: 1 } }),
    },
    {
      name: "list users",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${project(a)}/users` }),
    },
    {
      name: "create a user",
      method: "PUT",
      success: 201,
      prepare: async (a) => ({
        method: "PUT",
        path: `${project(a)}/users/${unique("u")}`,
        body: { password: "user-password", roles: ["Full access"] },
      }),
    },
    {
      name: "read a user",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${project(a)}/users/alice` }),
    },
    {
      name: "delete a user",
      method: "DELETE",
      success: 200,
      prepare: async (a) => {
        const name = unique("gone");
        expectOk(
          await operator.putUser(a, "demo", name, { password: "user-password", roles: [] }),
          "create user",
        );
        return { method: "DELETE", path: `${project(a)}/users/${name}` };
      },
    },
    {
      name: "list webhooks",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${project(a)}/webhooks` }),
    },
    {
      name: "create a webhook",
      method: "POST",
      success: 201,
      prepare: async (a) => ({ method: "POST", path: `${project(a)}/webhooks`, body: HOOK }),
    },
    {
      name: "read a webhook",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${project(a)}/webhooks/${await webhook(a)}` }),
    },
    {
      name: "read a webhook's delivery log",
      method: "GET",
      success: 200,
      prepare: async (a) => ({
        method: "GET",
        path: `${project(a)}/webhooks/${await webhook(a)}/deliveries`,
      }),
    },
    {
      name: "read a webhook's dead letters",
      method: "GET",
      success: 200,
      prepare: async (a) => ({
        method: "GET",
        path: `${project(a)}/webhooks/${await webhook(a)}/deadletters`,
      }),
    },
    {
      name: "replay a webhook's dead letters",
      method: "POST",
      success: 200,
      prepare: async (a) => ({
        method: "POST",
        path: `${project(a)}/webhooks/${await webhook(a)}/deadletters/replay`,
      }),
    },
    {
      name: "delete a webhook",
      method: "DELETE",
      success: 200,
      prepare: async (a) => ({ method: "DELETE", path: `${project(a)}/webhooks/${await webhook(a)}` }),
    },
    {
      name: "create an API key",
      method: "POST",
      success: 201,
      prepare: async (a) => ({
        method: "POST",
        path: `${project(a)}/apikeys`,
        body: { name: unique("k"), roles: [] },
      }),
    },
    {
      name: "list API keys",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${project(a)}/apikeys` }),
    },
    {
      name: "delete an API key",
      method: "DELETE",
      success: 200,
      prepare: async (a) => {
        const created = await operator.createKey(a, "demo", { name: unique("k"), roles: [] });
        expectOk(created, "create key");
        return { method: "DELETE", path: `${project(a)}/apikeys/${created.body.id}` };
      },
    },
    {
      name: "read the audit trail",
      method: "GET",
      success: 200,
      prepare: async (a) => ({ method: "GET", path: `${account(a)}/audit` }),
    },
    {
      name: "read the platform's audit trail",
      method: "GET",
      success: 200,
      platform: true,
      prepare: async (a) => ({ method: "GET", path: `/audit?account=${a}` }),
    },
    {
      name: "list the platform's accounts",
      method: "GET",
      success: 200,
      platform: true,
      prepare: async (a) => ({ method: "GET", path: `/accounts?since=${a}&pagesize=5` }),
    },
  ];
  const deleteAccount: Route = {
    name: "delete the account",
    method: "DELETE",
    success: 200,
    operatorOnly: true,
    prepare: async (a) => ({ method: "DELETE", path: account(a) }),
  };

  function expected(route: Route, caller: Caller, target: Account): Expected {
    if (caller === "none") return { status: 401, errorCode: 4011 };
    if (caller === "projectKey") return { status: 401, errorCode: 4012 };
    if (caller === "disabledAdmin") return { status: 401, errorCode: 4014 };
    if (caller === "operator") return { status: route.success };
    if (route.platform) return { status: 403, errorCode: 4031 };
    if (home[caller] !== target) {
      // Exactly what an account that does not exist answers.
      return {
        status: 404,
        body: { statusCode: 404, errorCode: 4041, errorMessage: `No account '${target}'` },
      };
    }
    if (route.operatorOnly) return { status: 403, errorCode: 4031 };
    if (caller === "readerA" && route.method !== "GET") return { status: 403, errorCode: 4031 };
    return { status: route.success };
  }

  async function send(caller: Caller, request: Request): Promise<Reply> {
    const credential = credentials.get(caller);
    // Admin keys travel either way: Bearer, or a key scheme like a project key.
    const authorization =
      credential === undefined
        ? undefined
        : caller === "readerA"
          ? `Tessera ${credential}:1`
          : `Bearer ${credential}`;
    return call(platform.baseUrl, request.method, `/admin/v1${request.path}`, {
      body: request.body,
      headers: authorization ? { authorization } : {},
    });
  }

  function check(r: Reply, want: Expected, what: string): void {
    expect(r.status, `${what}: ${JSON.stringify(r.body)}`).to.equal(want.status);
    if (want.errorCode !== undefined) expect(r.body.errorCode, what).to.equal(want.errorCode);
    if (want.body) expect(withoutRequestId(r.body), what).to.deep.equal(want.body);
  }

  before(async () => {
    platform = await startPlatform();
    operator = adminClient(platform.baseUrl, platform.adminToken);
    for (const a of ACCOUNTS) {
      expectOk(await operator.putAccount(a), `account ${a}`);
      expectOk(await operator.putProject(a, "demo", demoProject()), "project");
      expectOk(await operator.putProject(a, "demo", demoProject()), "second revision");
      expectOk(
        await operator.putUser(a, "demo", "alice", { password: "alice-password", roles: ["Full access"] }),
        "user",
      );
    }
    await putAdmin(operator, A, "ann", "admin", "ann-password-1");
    await putAdmin(operator, A, "rita", "reader", "rita-password-1");
    await putAdmin(operator, A, "dan", "admin", "dan-password-1");
    await putAdmin(operator, B, "ben", "admin", "ben-password-1");
    const dan = await adminKey(platform.baseUrl, A, "dan", "dan-password-1");
    expect((await adminAuthentication(platform.baseUrl, A, { apikey: dan, disable: true })).status).to.equal(
      200,
    );
    credentials.set("operator", platform.adminToken);
    credentials.set("adminA", await adminKey(platform.baseUrl, A, "ann", "ann-password-1"));
    credentials.set("readerA", await adminKey(platform.baseUrl, A, "rita", "rita-password-1"));
    credentials.set("adminB", await adminKey(platform.baseUrl, B, "ben", "ben-password-1"));
    credentials.set(
      "projectKey",
      (await operator.createKey(A, "demo", { name: "pk", roles: ["Full access"] })).body.apikey,
    );
    credentials.set("disabledAdmin", dan);
    credentials.set("none", undefined);
  });
  after(() => platform.close());

  const cell = (route: Route, caller: Caller, target: Account) => {
    const want = expected(route, caller, target);
    it(`${route.method} ${route.name} · ${target} · ${caller} → ${want.status}${want.errorCode ? `/${want.errorCode}` : ""}`, async () => {
      const request = await route.prepare(target);
      check(await send(caller, request), want, `${request.method} ${request.path} as ${caller}`);
    });
  };

  for (const target of ACCOUNTS) {
    for (const route of routes) for (const caller of CALLERS) cell(route, caller, target);

    // The login form needs no credential: everyone gets it, for any account name.
    for (const caller of CALLERS) {
      it(`GET the admin login form · ${target} · ${caller} → 200`, async () => {
        check(
          await send(caller, { method: "GET", path: `${account(target)}/@authentication` }),
          { status: 200 },
          "form",
        );
      });
    }

    // @authentication needs no credential: each caller's key is revalidated through it (none: an empty login).
    for (const caller of CALLERS) {
      const owner = caller === "disabledAdmin" ? A : home[caller];
      const want: Expected =
        caller === "none"
          ? { status: 401, errorCode: 4015 }
          : caller === "operator"
            ? { status: 401, errorCode: 4011 }
            : caller === "projectKey" || owner !== target
              ? { status: 401, errorCode: 4012 }
              : caller === "disabledAdmin"
                ? { status: 401, errorCode: 4014 }
                : { status: 200 };
      it(`POST admin @authentication (revalidate) · ${target} · ${caller} → ${want.status}${want.errorCode ? `/${want.errorCode}` : ""}`, async () => {
        const key = credentials.get(caller);
        const r = await adminAuthentication(
          platform.baseUrl,
          target,
          key === undefined ? {} : { apikey: key },
        );
        check(r, want, "revalidation");
      });
    }
  }

  it("the operator gets the same 404 body for every route of an account that does not exist", async () => {
    for (const route of [...routes, deleteAccount]) {
      // A PUT of the account itself would create it; the platform's audit is outside every account.
      if (route.platform || route.name === "rename the account") continue;
      const request = await route.prepare(A);
      const r = await send("operator", {
        ...request,
        path: request.path.replace(`/accounts/${A}`, "/accounts/ghost"),
      });
      check(
        r,
        { status: 404, body: { statusCode: 404, errorCode: 4041, errorMessage: "No account 'ghost'" } },
        route.name,
      );
    }
  });

  // Deleting an account comes last, the operator's deletions at the very end.
  for (const target of ACCOUNTS) {
    for (const caller of CALLERS) if (caller !== "operator") cell(deleteAccount, caller, target);
  }
  for (const target of ACCOUNTS) cell(deleteAccount, "operator", target);
});
