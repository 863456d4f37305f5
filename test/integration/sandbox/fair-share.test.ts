/**
 * Each account's fair share of the sandbox, end to end through the edge: one
 * account floods logins of ten projects whose custom providers spin until their
 * time limit, while another account reads, logs in and calls its JavaScript
 * resource. The flooding account is refused (429/4293 with Retry-After) once
 * its JavaScript has used its CPU time; the other account is never refused.
 * (How fast the other account is served meanwhile is measured by `make bench`,
 * scenario `fair-share`.)
 */
import { expect } from "chai";
import { ErrorCode } from "../../../shared/errors.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const HOSTILE_PROJECTS = 10;
const CONCURRENT_LOGINS = 40;
/** The flood stops once the hostile account has seen this many refusals (or after MAX_ATTEMPTS logins). */
const REFUSALS_WANTED = 20;
const MAX_ATTEMPTS = 400;

const SPINNER = `function spinnerCreate() {
  return { authenticate: function () { while (true) {} } };
}`;

const VICTIM_RESOURCE =
  "const page = await tessera.get('customer', {pagesize: 5}); return {count: page.rows.length};";

describe("a fair share of the sandbox per account", function () {
  this.timeout(120_000);
  let platform: Platform;
  let hostileKey: string;

  before(async () => {
    platform = await startPlatform({
      // A wall-clock limit: the spinners end at it, and the other account's JavaScript resource
      // (a store read) must fit in it however loaded the machine is.
      SANDBOX_TIMEOUT_MS: "3000",
      SANDBOX_ACCOUNT_CONCURRENCY: "2",
      SANDBOX_ACCOUNT_CPU_MS: "1500",
      // Long enough that the flooding account stays over its budget for the whole file.
      SANDBOX_ACCOUNT_CPU_WINDOW_MS: "600000",
    });
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    expect((await admin.putAccount("hostile")).status).to.equal(201);
    for (let i = 0; i < HOSTILE_PROJECTS; i++) {
      const definition = demoProject({
        authentication: { provider: "custom", library: "spinner", createFunction: "spinnerCreate" },
        libraries: { spinner: { code: SPINNER } },
        rules: [
          { table: "customer", type: "validation", expression: "row.balance >= 0", message: "negative" },
        ],
      });
      (definition.apiVersions.v1.resources as Record<string, unknown>).Count = {
        type: "javascript",
        code: VICTIM_RESOURCE,
      };
      const r = await admin.putProject("hostile", `p${i}`, definition);
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
    }
    hostileKey = await admin.keyWith("hostile", "p0", ["Full access"]);
    expect((await admin.putAccount("victim")).status).to.equal(201);
    const definition = demoProject();
    (definition.apiVersions.v1.resources as Record<string, unknown>).Count = {
      type: "javascript",
      code: VICTIM_RESOURCE,
    };
    const created = await admin.putProject("victim", "shop", definition);
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const user = await admin.putUser("victim", "shop", "vera", {
      password: "vera-password",
      roles: ["Full access"],
    });
    expect(user.status, JSON.stringify(user.body)).to.be.oneOf([200, 201]);
  });

  after(async () => {
    await platform?.close();
  });

  it("refuses the flooding account with 429 and Retry-After, and never the other account", async () => {
    const victim = projectClient(platform.baseUrl, "victim", "shop");
    const login = await victim.login({ username: "vera", password: "vera-password" });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    const key = login.body.apikey as string;
    expect((await victim.post(key, "Customers", { Name: "Ann", Region: "west" })).status).to.equal(201);

    const hostile: Reply[] = [];
    let attempts = 0;
    let flooding = true;
    const refusals = () => hostile.filter((r) => r.status === 429).length;
    const flood = async (worker: number) => {
      while (refusals() < REFUSALS_WANTED && attempts < MAX_ATTEMPTS) {
        const n = attempts++;
        const project = projectClient(platform.baseUrl, "hostile", `p${(worker + n) % HOSTILE_PROJECTS}`);
        hostile.push(await project.login({ username: `u${n}`, password: "x" }));
      }
    };

    const answers: { what: string; reply: Reply }[] = [];
    const measure = async () => {
      while (flooding) {
        answers.push({ what: "GET", reply: await victim.get(key, "Customers") });
        answers.push({
          what: "login",
          reply: await victim.login({ username: "vera", password: "vera-password" }),
        });
        answers.push({ what: "javascript", reply: await victim.get(key, "Count") });
      }
    };

    const victimDone = measure();
    await Promise.all(Array.from({ length: CONCURRENT_LOGINS }, (_, worker) => flood(worker)));
    flooding = false;
    await victimDone;

    const refused = hostile.filter((r) => r.status === 429);
    expect(refused.length, `hostile answers: ${summary(hostile)}`).to.be.at.least(REFUSALS_WANTED);
    for (const r of refused) {
      expect(r.body.errorCode).to.equal(ErrorCode.sandboxShareUsed);
      expect(Number(r.headers.get("retry-after"))).to.be.greaterThan(0);
    }
    const metrics = (await call(platform.dataUrl, "GET", "/metrics")).body as string;
    const counted = /^tessera_sandbox_refusals_total\{[^}]*reason="cpu"[^}]*\} (\d+)$/m.exec(metrics)?.[1];
    expect(Number(counted)).to.be.at.least(REFUSALS_WANTED);
    expect(answers.length).to.be.greaterThan(0);
    const notOk = answers.filter((a) => a.reply.status !== 200);
    expect(
      notOk.map((a) => `${a.what}: ${a.reply.status} ${JSON.stringify(a.reply.body)}`),
      "the other account's answers",
    ).to.deep.equal([]);
  });

  it("refuses the flooding account's rules and JavaScript resources too while its budget is used", async () => {
    const hostile = projectClient(platform.baseUrl, "hostile", "p0");
    // Spin until the account's budget is used (at once when the flood above used it).
    let login: Reply | undefined;
    for (let n = 0; n < MAX_ATTEMPTS && login?.status !== 429; n++) {
      login = await hostile.login({ username: `again${n}`, password: "x" });
    }
    expect(login?.status).to.equal(429);
    const write = await hostile.post(hostileKey, "Customers", { Name: "Mallory", Balance: 1 });
    expect(write.status, JSON.stringify(write.body)).to.equal(429);
    expect(write.body.errorCode).to.equal(ErrorCode.sandboxShareUsed);
    expect(Number(write.headers.get("retry-after"))).to.be.greaterThan(0);
    expect((await hostile.get(hostileKey, "Customers")).body).to.deep.equal([]);
    const script = await hostile.get(hostileKey, "Count");
    expect(script.status, JSON.stringify(script.body)).to.equal(429);
    expect(script.body.errorCode).to.equal(ErrorCode.sandboxShareUsed);
  });
});

function summary(replies: Reply[]): string {
  const counts: Record<string, number> = {};
  for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return JSON.stringify(counts);
}
