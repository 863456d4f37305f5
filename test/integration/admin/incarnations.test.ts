/**
 * Identity by incarnation, through the edge: writes in flight while a
 * project or an account is deleted never reach the next project or account of
 * the same name (users, administrators, projects and their definitions, manual
 * API keys); a re-created project's JavaScript starts afresh; ETags carry the
 * incarnation, so an `If-Match` taken before a deletion never matches the
 * project created after it, and DELETE honours `If-Match` too.
 * Each race runs many times in one platform, its requests fired at once.
 */
import { expect } from "chai";
import { generateKey, hashKey } from "../../../shared/key-format.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminKey, putAdmin } from "../../support/admins.ts";
import { adminClient, call, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const ITERATIONS = 50;
/** Writes fired together with each deletion. */
const WRITES = 6;

const userBody = { password: "ghost-password", roles: ["Full access"] };
const ghostUser = (username: string) => ({ username, roles: ["Full access"], globals: {} });

describe("identity by incarnation", function () {
  this.timeout(600_000);
  let platform: Platform;
  let operator: ReturnType<typeof adminClient>;
  let seq = 0;
  /** A fresh account name per test: each test's iterations reuse it. */
  let account = "";

  const projectPath = (project: string, rest = "") => `/accounts/${account}/projects/${project}${rest}`;
  const expectStatus = (r: Reply, ...statuses: number[]) =>
    expect(r.status, JSON.stringify(r.body)).to.be.oneOf(statuses);

  /** The account with an administrator `old` and project `p`; answers the administrator's client. */
  async function oldOwner() {
    expectStatus(await operator.putAccount(account), 201);
    await putAdmin(operator, account, "old", "admin", "old-password-1");
    const old = adminClient(
      platform.baseUrl,
      await adminKey(platform.baseUrl, account, "old", "old-password-1"),
    );
    expectStatus(await old.putProject(account, "p", demoProject()), 201);
    return old;
  }

  /** The new owner: the account created again (when it is gone) and project `p` in it. */
  async function newOwner() {
    expectStatus(await operator.putAccount(account), 200, 201);
    expectStatus(await operator.putProject(account, "p", demoProject()), 201);
  }

  before(async () => {
    platform = await startPlatform();
    operator = adminClient(platform.baseUrl, platform.adminToken);
  });
  after(() => platform?.close());
  beforeEach(() => {
    account = `inc${++seq}`;
  });

  /** Fires `writes` and the deletion together; every answer must be one a client can see in such a race. */
  async function race(writes: (() => Promise<Reply>)[], deletion: () => Promise<Reply>) {
    const answers = await Promise.all([...writes.map((w) => w()), deletion()]);
    for (const r of answers) expectStatus(r, 200, 201, 401, 404, 409, 503);
    return answers;
  }

  const deleteProject = () => operator.send("DELETE", projectPath("p"));
  const deleteAccount = () => operator.send("DELETE", `/accounts/${account}`);
  const createProject = async () => {
    expectStatus(await operator.putProject(account, "p", demoProject()), 201);
  };

  type Write = (client: ReturnType<typeof adminClient>, iteration: number, n: number) => Promise<Reply>;
  type Check = (iteration: number, answers: Reply[]) => Promise<void>;

  /**
   * ITERATIONS times: WRITES `write`s fired with the deletion of project `p`, then `p` created
   * again (`recreate`) and `check`ed.
   */
  async function underProjectDeletion(write: Write, check: Check, recreate = createProject) {
    await oldOwner();
    for (let i = 0; i < ITERATIONS; i++) {
      const writes = Array.from({ length: WRITES }, (_, n) => () => write(operator, i, n));
      const answers = await race(writes, deleteProject);
      await recreate();
      await check(i, answers);
    }
    await expectNothingLeftBehind();
  }

  /**
   * ITERATIONS times: the old owner's WRITES `write`s fired with the account's deletion
   * (`deletion`), then the account created again (`recreate`: with project `p`) and `check`ed.
   */
  async function underAccountDeletion(
    write: Write,
    check: Check,
    recreate = newOwner,
    deletion: () => Promise<Reply> = deleteAccount,
  ) {
    for (let i = 0; i < ITERATIONS; i++) {
      const old = await oldOwner();
      const writes = Array.from({ length: WRITES }, (_, n) => () => write(old, i, n));
      const answers = await race(writes, deletion);
      await recreate();
      await check(i, answers);
      expectStatus(await deleteAccount(), 200);
    }
    await expectNothingLeftBehind();
  }

  /**
   * Once the sweeper has run, no record of the account's name belongs to a deleted incarnation:
   * what late writes left behind is gone too.
   */
  async function expectNothingLeftBehind() {
    await platform.data.sweeper.sweep();
    const { meta, users, admins, revisions, keyStore } = platform.data.deps;
    const live = await meta.getAccount(account);
    const liveUid = live ? meta.accountUid(live) : "";
    const projects = await meta.listProjects(account);
    const uids = projects.map((p) => p.uid);
    const leftovers = {
      users: await users.users.countDocuments({ account, projectUid: { $nin: uids } }).exec(),
      revisions: await revisions.revisions.countDocuments({ account, projectUid: { $nin: uids } }).exec(),
      admins: await admins.admins.countDocuments({ account, accountUid: { $ne: liveUid } }).exec(),
      projects: await meta.projects.countDocuments({ account, uid: { $nin: uids } }).exec(),
      keys: (await keyStore.list(account, "p", Date.now())).filter((k) => !uids.includes(k.projectUid))
        .length,
    };
    expect(leftovers).to.deep.equal({ users: 0, revisions: 0, admins: 0, projects: 0, keys: 0 });
  }

  const putGhostUser: Write = (client, i, n) => client.putUser(account, "p", `ghost${i}x${n}`, userBody);
  const createGhostKey: Write = (client, i, n) =>
    client.createKey(account, "p", { name: `ghost${i}x${n}`, roles: ["Full access"] });
  const expectNoUsers: Check = async (i) => {
    const users = await operator.send("GET", projectPath("p", "/users"));
    expect(users.body, `iteration ${i}`).to.deep.equal([]);
    const login = await projectClient(platform.baseUrl, account, "p").login({
      username: `ghost${i}x0`,
      password: userBody.password,
    });
    expect(login.status, `iteration ${i}`).to.equal(401);
  };
  const expectNoKeys: Check = async (i, answers) => {
    const keys = await operator.listKeys(account, "p");
    expect(keys.body, `iteration ${i}`).to.deep.equal([]);
    const client = projectClient(platform.baseUrl, account, "p");
    for (const r of answers.filter((a) => a.body?.apikey)) {
      expect((await client.get(r.body.apikey, "customer")).status, `iteration ${i}`).to.equal(401);
      expect((await client.login({ apikey: r.body.apikey })).status, `iteration ${i}`).to.equal(401);
    }
  };

  describe("under project deletion", () => {
    it("users written meanwhile are not in the project created again", async () => {
      await underProjectDeletion(putGhostUser, expectNoUsers);
    });

    it("definitions written meanwhile do not become revisions of the project created again", async () => {
      const changed = () => {
        const d = demoProject();
        (d.tables.customer.columns as Record<string, unknown>).ghost = { type: "string" };
        return d;
      };
      await underProjectDeletion(
        (client) => client.putProject(account, "p", changed()),
        async (i) => {
          const revisions = await operator.send("GET", projectPath("p", "/revisions"));
          expect(
            revisions.body.map((r: { revision: number }) => r.revision),
            `iteration ${i}`,
          ).to.deep.equal([1]);
        },
        async () => {
          // A PUT landing after the deletion created the project anew (revision 1): delete it first.
          const created = await operator.putProject(account, "p", demoProject());
          expectStatus(created, 200, 201);
          if (created.status === 200) {
            expectStatus(await deleteProject(), 200);
            await createProject();
          }
        },
      );
    });

    it("manual keys created meanwhile are not listed for the project created again", async () => {
      await underProjectDeletion(createGhostKey, expectNoKeys);
    });
  });

  describe("under account deletion", () => {
    it("users the old owner wrote meanwhile are not in the account created again", async () => {
      await underAccountDeletion(putGhostUser, expectNoUsers);
    });

    it("users the old owner wrote while the account was deleted and created again are not in the new one", async () => {
      await underAccountDeletion(
        putGhostUser,
        expectNoUsers,
        async () => {},
        async () => {
          const deleted = await deleteAccount();
          await newOwner();
          return deleted;
        },
      );
    });

    it("administrators written meanwhile are not in the account created again", async () => {
      await underAccountDeletion(
        (old, _i, n) =>
          old.send("PUT", `/accounts/${account}/admins/ghost${n}`, {
            password: "ghost-password-1",
            role: "admin",
          }),
        async (i) => {
          const admins = await operator.send("GET", `/accounts/${account}/admins`);
          expect(admins.body, `iteration ${i}`).to.deep.equal([]);
        },
      );
    });

    it("projects written meanwhile are not in the account created again", async () => {
      await underAccountDeletion(
        (old, _i, n) => old.putProject(account, n === 0 ? "p" : `q${n}`, demoProject()),
        async (i) => {
          const projects = await operator.send("GET", `/accounts/${account}/projects`);
          expect(projects.body, `iteration ${i}`).to.deep.equal([]);
          const created = await operator.putProject(account, "q1", demoProject());
          expect(created.status, `iteration ${i}: ${JSON.stringify(created.body)}`).to.equal(201);
          expect(created.body.revision).to.equal(1);
        },
        async () => {
          expectStatus(await operator.putAccount(account), 201);
        },
      );
    });

    it("manual keys created meanwhile are not listed in the account created again", async () => {
      await underAccountDeletion(createGhostKey, expectNoKeys);
    });
  });

  describe("the sweeper", () => {
    it("removes what writes landing after an account's deletion left for its incarnation", async () => {
      await oldOwner();
      const { meta, users, admins, revisions, keyStore } = platform.data.deps;
      const dead = meta.accountUid((await meta.getAccount(account))!);
      const deadProject = (await meta.getProject(account, "p"))!.uid;
      expectStatus(await deleteAccount(), 200);
      // Late writes, as requests that passed their checks before the deletion would make them.
      await users.put({ account, name: "p", uid: deadProject }, { ...ghostUser("late"), passwordHash: "x" });
      await admins.put({
        account,
        accountUid: dead,
        login: "late",
        role: "admin",
        passwordHash: "x",
        credentialStamp: "x",
      });
      const ghost = await meta.writeProject(
        account,
        "q",
        {},
        { accountUid: dead, uid: "ghost-uid", revision: 0 },
      );
      expect(ghost).to.not.equal(null);
      await users.put({ account, name: "q", uid: "ghost-uid" }, { ...ghostUser("late"), passwordHash: "x" });
      await revisions.save({
        account,
        project: "p",
        projectUid: deadProject,
        revision: 9,
        definition: {},
        by: null,
        at: new Date(),
        summary: "late",
        requestId: null,
      });
      await keyStore.create(
        hashKey(generateKey()),
        {
          id: "latekey",
          kind: "manual",
          account,
          project: "p",
          projectUid: deadProject,
          name: "late",
          userIdentifier: null,
          roles: [],
          globals: {},
          createdAt: Date.now(),
          expiresAt: null,
          status: "active",
        },
        Date.now(),
      );
      await expectNothingLeftBehind();
    });
  });

  describe("keys", () => {
    it("a key of a project deleted since is not revalidated by the project created again", async () => {
      expectStatus(await operator.putAccount(account), 201);
      await createProject();
      const key = await operator.keyWith(account, "p", ["Full access"]);
      const client = projectClient(platform.baseUrl, account, "p");
      expect((await client.login({ apikey: key })).status).to.equal(200);
      expectStatus(await deleteProject(), 200);
      await createProject();
      const revalidated = await client.login({ apikey: key });
      expect(revalidated.status, JSON.stringify(revalidated.body)).to.equal(401);
      expect(revalidated.body.errorCode).to.equal(4011);
    });
  });

  describe("sandbox programs", () => {
    const stashing = () => {
      const d = demoProject() as ReturnType<typeof demoProject> & Record<string, unknown>;
      (d.apiVersions.v1.resources as Record<string, unknown>).Stash = {
        type: "javascript",
        code: `globalThis.stash ??= [];
          if (request.params.put) globalThis.stash.push(request.params.put);
          return globalThis.stash;`,
      };
      return d;
    };

    it("a JavaScript resource of a project created again does not answer its predecessor's state", async () => {
      expectStatus(await operator.putAccount(account), 201);
      for (let i = 0; i < ITERATIONS; i++) {
        expectStatus(await operator.putProject(account, "p", stashing()), 201);
        const key = await operator.keyWith(account, "p", ["Full access"]);
        const client = projectClient(platform.baseUrl, account, "p");
        const stashed = await client.get(key, `Stash?put=secret${i}`);
        expect(stashed.status, JSON.stringify(stashed.body)).to.equal(200);
        expect(stashed.body).to.include(`secret${i}`);
        expectStatus(await deleteProject(), 200);
        expectStatus(await operator.putProject(account, "p", stashing()), 201);
        const fresh = await client.get(await operator.keyWith(account, "p", ["Full access"]), "Stash");
        expect(fresh.body, `iteration ${i}`).to.deep.equal([]);
        expectStatus(await deleteProject(), 200);
      }
    });
  });

  describe("custom providers", () => {
    // Remembers every login name in the isolate's globals and answers the earlier ones.
    const remembering = () =>
      demoProject({
        authentication: { provider: "custom", library: "remember", createFunction: "rememberCreate" },
        libraries: {
          remember: {
            code: `function rememberCreate() {
              return {
                configure: () => {},
                getLoginInfo: () => ({ fields: [], links: [] }),
                authenticate: (payload) => {
                  globalThis.seen ??= [];
                  const earlier = globalThis.seen.slice();
                  globalThis.seen.push(payload.username);
                  return { errorMessage: null, roleNames: ["Full access"], userIdentifier: payload.username,
                    userInfo: { earlier } };
                },
              };
            }`,
          },
        },
      });

    it("a provider of a project created again does not answer its predecessor's login names", async () => {
      expectStatus(await operator.putAccount(account), 201);
      const client = projectClient(platform.baseUrl, account, "p");
      for (let i = 0; i < ITERATIONS; i++) {
        expectStatus(await operator.putProject(account, "p", remembering()), 201);
        const first = await client.login({ username: `old${i}` });
        expect(first.status, JSON.stringify(first.body)).to.equal(200);
        expectStatus(await deleteProject(), 200);
        expectStatus(await operator.putProject(account, "p", remembering()), 201);
        const fresh = await client.login({ username: `new${i}` });
        expect(fresh.status, JSON.stringify(fresh.body)).to.equal(200);
        expect(fresh.body.userInfo, `iteration ${i}`).to.deep.equal({ earlier: [] });
        expectStatus(await deleteProject(), 200);
      }
    });
  });

  describe("ETags and If-Match", () => {
    it("an ETag taken before the project was deleted does not match the project created again", async () => {
      expectStatus(await operator.putAccount(account), 201);
      const first = await operator.putProject(account, "p", demoProject());
      const etag = first.headers.get("etag")!;
      expect(etag).to.match(/^"[^"]+"$/);
      expectStatus(await deleteProject(), 200);
      expectStatus(await operator.putProject(account, "p", demoProject()), 201);
      const stale = await call(platform.baseUrl, "PUT", `/admin/v1${projectPath("p")}`, {
        body: demoProject(),
        headers: { authorization: `Bearer ${platform.adminToken}`, "if-match": etag },
      });
      expect(stale.status, JSON.stringify(stale.body)).to.equal(412);
      expect(stale.body.errorCode).to.equal(4121);
      const current = await operator.send("GET", projectPath("p"));
      expect(current.body.revision).to.equal(1);
      expect(current.headers.get("etag")).to.not.equal(etag);
    });

    /** `If-Match` with `stale` on a PUT and a DELETE of `path`: 412/4121, and the record stays as it is (`current`). */
    async function expectRefused(path: string, body: unknown, stale: string, current: string) {
      for (const [method, sent] of [
        ["PUT", body],
        ["DELETE", undefined],
      ] as const) {
        const r = await call(platform.baseUrl, method, `/admin/v1${path}`, {
          body: sent,
          headers: { authorization: `Bearer ${platform.adminToken}`, "if-match": stale },
        });
        expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).to.equal(412);
        expect(r.body.errorCode).to.equal(4121);
        const now = await operator.send("GET", path);
        expect(now.status).to.equal(200);
        expect(now.headers.get("etag"), `${method} ${path} changed nothing`).to.equal(current);
      }
    }

    /**
     * A record at `path` (PUT `body`, then `changed`): its ETag changes with it; PUT and DELETE with
     * the old one are 412; DELETE with the current one deletes it; after its owner was deleted and
     * created again (`recreateOwner`) and the record with it, an ETag of the old record matches nothing.
     */
    async function honoursIfMatch(
      path: string,
      body: unknown,
      changed: unknown,
      recreateOwner: () => Promise<void>,
    ) {
      const first = await operator.send("PUT", path, body);
      expectStatus(first, 201);
      const firstTag = first.headers.get("etag")!;
      expect(firstTag).to.match(/^"[^"]+"$/);
      expect((await operator.send("GET", path)).headers.get("etag")).to.equal(firstTag);
      const second = await operator.send("PUT", path, changed);
      expectStatus(second, 200);
      const secondTag = second.headers.get("etag")!;
      expect(secondTag).to.not.equal(firstTag);
      await expectRefused(path, body, firstTag, secondTag);
      const deleted = await call(platform.baseUrl, "DELETE", `/admin/v1${path}`, {
        headers: { authorization: `Bearer ${platform.adminToken}`, "if-match": secondTag },
      });
      expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200);
      expect((await operator.send("GET", path)).status).to.equal(404);
      await recreateOwner();
      const again = await operator.send("PUT", path, changed);
      expectStatus(again, 201);
      await expectRefused(path, body, secondTag, again.headers.get("etag")!);
    }

    it("a user's writes honour If-Match, across the project's deletion too", async () => {
      expectStatus(await operator.putAccount(account), 201);
      await createProject();
      await honoursIfMatch(
        projectPath("p", "/users/ann"),
        userBody,
        { ...userBody, roles: ["No delete"] },
        async () => {
          expectStatus(await deleteProject(), 200);
          await createProject();
        },
      );
    });

    it("an administrator's writes honour If-Match, across the account's deletion too", async () => {
      expectStatus(await operator.putAccount(account), 201);
      await honoursIfMatch(
        `/accounts/${account}/admins/ann`,
        { password: "ann-password-1", role: "admin" },
        { password: "ann-password-2", role: "reader" },
        async () => {
          expectStatus(await deleteAccount(), 200);
          expectStatus(await operator.putAccount(account), 201);
        },
      );
    });

    it("an account's writes honour If-Match, across its deletion too", async () => {
      await honoursIfMatch(`/accounts/${account}`, {}, { displayName: "Acme" }, async () => {});
    });

    it("a manual key's deletion honours If-Match", async () => {
      expectStatus(await operator.putAccount(account), 201);
      await createProject();
      const created = await operator.createKey(account, "p", { name: "k", roles: ["Full access"] });
      expectStatus(created, 201);
      const tag = created.headers.get("etag")!;
      expect(tag).to.match(/^"[^"]+"$/);
      const path = `/admin/v1${projectPath("p", `/apikeys/${created.body.id}`)}`;
      const auth = { authorization: `Bearer ${platform.adminToken}` };
      const refused = await call(platform.baseUrl, "DELETE", path, {
        headers: { ...auth, "if-match": '"other"' },
      });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(412);
      expect((await operator.listKeys(account, "p")).body).to.have.length(1);
      const deleted = await call(platform.baseUrl, "DELETE", path, { headers: { ...auth, "if-match": tag } });
      expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200);
      expect((await operator.listKeys(account, "p")).body).to.deep.equal([]);
    });

    it("DELETE of a project with a stale If-Match answers 412 and deletes nothing", async () => {
      expectStatus(await operator.putAccount(account), 201);
      const first = await operator.putProject(account, "p", demoProject());
      const stale = first.headers.get("etag")!;
      const second = await operator.putProject(account, "p", {
        ...demoProject(),
        roles: { "Full access": demoProject().roles["Full access"] },
      });
      expectStatus(second, 200);
      const auth = { authorization: `Bearer ${platform.adminToken}` };
      const refused = await call(platform.baseUrl, "DELETE", `/admin/v1${projectPath("p")}`, {
        headers: { ...auth, "if-match": stale },
      });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(412);
      expect(refused.body.errorCode).to.equal(4121);
      expect((await operator.send("GET", projectPath("p"))).status).to.equal(200);
      const deleted = await call(platform.baseUrl, "DELETE", `/admin/v1${projectPath("p")}`, {
        headers: { ...auth, "if-match": second.headers.get("etag")! },
      });
      expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200);
      expect((await operator.send("GET", projectPath("p"))).status).to.equal(404);
    });
  });
});
