/**
 * The lock-out holds under concurrency: a burst of parallel guesses for one user
 * has at most LOGIN_FAILURES_BEFORE_LOCKOUT wrong guesses verified; and only
 * failures lock: parallel logins with the right password are never refused for
 * each other (those beyond N wait for a verdict). Verifications are counted where
 * they happen: the project's provider asks a loopback "identity service" for
 * every login, and that service counts the questions.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { until } from "../../support/until.ts";

const THRESHOLD = 5;

/**
 * Answers `{ok}` for `{email, password}` after a short delay, and counts every question;
 * `hold()` keeps the answers back until the function it returns is called.
 */
function countingIdentityService(rightPassword: string) {
  const asked: { email: string; right: boolean }[] = [];
  let gate = Promise.resolve();
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", async () => {
      const input = JSON.parse(body || "{}") as { email?: string; password?: string };
      asked.push({ email: String(input.email), right: input.password === rightPassword });
      await gate;
      setTimeout(() => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ ok: input.password === rightPassword }));
      }, 150);
    });
  });
  const hold = () => {
    let release!: () => void;
    gate = new Promise((r) => {
      release = r;
    });
    return release;
  };
  return { server, asked, hold };
}

/** A provider that checks every login with the identity service at `config.url`. */
const countingProviderCode = `
function countingCreate() {
  let url = "";
  return {
    configure(config) { url = config.url; },
    getLoginInfo() {
      return { fields: [{ name: "email", type: "text" }, { name: "password", type: "password" }], links: [] };
    },
    async authenticate(payload) {
      const res = await tessera.fetchJson(url, { method: "POST", body: { email: payload.email, password: payload.password } });
      if (res.body && res.body.ok === true) return { roleNames: ["Full access"], userIdentifier: payload.email };
      return { errorMessage: "unknown user or wrong password" };
    }
  };
}`;

/** The identity service, and a platform with project `acme/counting` whose provider asks it. */
async function startCountingPlatform(env: Record<string, string> = {}) {
  const identity = countingIdentityService("right-password");
  await new Promise<void>((r) => identity.server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(identity.server.address() as AddressInfo).port}/check`;
  const platform = await startPlatform({
    LOGIN_FAILURES_BEFORE_LOCKOUT: String(THRESHOLD),
    LOGIN_LOCKOUT_BASE_SECONDS: "30",
    LOGIN_LOCKOUT_MAX_SECONDS: "60",
    SANDBOX_ALLOW_LOOPBACK_FETCH: "true",
    SANDBOX_TIMEOUT_MS: "10000",
    ...env,
  });
  const admin = adminClient(platform.baseUrl, platform.adminToken);
  await admin.putAccount("acme");
  const put = await admin.putProject(
    "acme",
    "counting",
    demoProject({
      authentication: {
        provider: "custom",
        library: "counting",
        createFunction: "countingCreate",
        config: { url },
        allowedHosts: ["127.0.0.1"],
      },
      libraries: { counting: { code: countingProviderCode } },
    }),
  );
  expect(put.status, JSON.stringify(put.body)).to.be.oneOf([200, 201]);
  return { identity, platform, admin, counting: projectClient(platform.baseUrl, "acme", "counting") };
}

describe("login lock-out under concurrency", () => {
  let platform: Platform;
  let identity: ReturnType<typeof countingIdentityService>;
  let counting: ReturnType<typeof projectClient>;
  let builtin: ReturnType<typeof projectClient>;

  before(async () => {
    const started = await startCountingPlatform();
    ({ platform, identity, counting } = started);
    const { admin } = started;
    await admin.putProject("acme", "demo", demoProject());
    await admin.putUser("acme", "demo", "alice", { password: "alice-password", roles: ["Full access"] });
    for (const user of ["service", "mixed"])
      await admin.putUser("acme", "demo", user, { password: `${user}-password`, roles: ["Full access"] });
    builtin = projectClient(platform.baseUrl, "acme", "demo");
  });
  after(async () => {
    await platform?.close();
    identity?.server.close();
  });

  it("40 parallel guesses (the right password among them): at most N wrong ones reach the provider (2N − 1 when the right one, verified, forgives those before it), the rest are 429 with Retry-After", async () => {
    const attempts = Array.from({ length: 40 }, (_, i) =>
      counting.login({ email: "victim@example.com", password: i === 20 ? "right-password" : `guess-${i}` }),
    );
    const answers = await Promise.all(attempts);
    const asked = identity.asked.filter((q) => q.email === "victim@example.com");
    const wrong = asked.filter((q) => !q.right).length;
    // A verified right password forgives the failures before it, as any successful login does
    // (attempt-throttle.ts: "a success resets f to 0"). It held one of the N places, so at most
    // N − 1 wrong guesses were verified beside it, and at most N after its reset: 2N − 1. Without
    // it, N. (Which one happens depends on the order the verdicts are settled in.)
    const rightVerified = asked.some((q) => q.right);
    expect(wrong).to.be.at.most(rightVerified ? 2 * THRESHOLD - 1 : THRESHOLD);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401).length).to.equal(wrong);
    expect(statuses.filter((s) => s === 200).length).to.equal(asked.length - wrong);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).to.equal(40 - asked.length);
    for (const r of refused) {
      expect(r.body.errorCode).to.equal(4291);
      expect(Number(r.headers.get("retry-after"))).to.be.at.least(1);
    }
  });

  it("the built-in provider too: at most N of 40 parallel wrong guesses get a verdict", async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => builtin.login({ username: "alice", password: `guess-${i}` })),
    );
    const verdicts = answers.filter((a) => a.status === 401 || a.status === 200).length;
    expect(verdicts).to.be.within(1, THRESHOLD);
    expect(answers.filter((a) => a.status === 429).length).to.equal(40 - verdicts);
  });

  it("10 parallel logins of one user with the right password, 50 rounds: every one answers 200", async () => {
    for (let round = 0; round < 50; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          builtin.login({ username: "service", password: "service-password" }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses, `round ${round}`).to.deep.equal(Array(10).fill(200));
    }
  });

  it("right logins in parallel with fewer than N wrong guesses, 20 rounds: every right one 200, every wrong one 401", async () => {
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 + THRESHOLD - 1 }, (_, i) =>
          builtin.login({ username: "mixed", password: i < 10 ? "mixed-password" : `guess-${i}` }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses, `round ${round}`).to.deep.equal([
        ...Array(10).fill(200),
        ...Array(THRESHOLD - 1).fill(401),
      ]);
      // Guesses answered after the last success still count: a success ends the round.
      expect((await builtin.login({ username: "mixed", password: "mixed-password" })).status).to.equal(200);
    }
  });
});

describe("a login whose identity's places stay taken for the whole wait", () => {
  let started: Awaited<ReturnType<typeof startCountingPlatform>>;

  before(async () => {
    // One place (a provider's program runs few calls at a time, so only so many can be held).
    started = await startCountingPlatform({
      LOGIN_FAILURES_BEFORE_LOCKOUT: "1",
      LOGIN_QUEUE_WAIT_SECONDS: "0",
    });
  });
  after(async () => {
    await started?.platform.close();
    started?.identity.server.close();
  });

  it("answers 503/5031 with Retry-After, not 429, and is not checked", async () => {
    const { identity, counting } = started;
    const release = identity.hold();
    const login = () => counting.login({ email: "held@example.com", password: "right-password" });
    const held = login();
    await until("a login being checked", async () => identity.asked.length === 1);
    const busy = await login();
    expect(busy.status).to.equal(503);
    expect(busy.body.errorCode).to.equal(5031);
    expect(busy.headers.get("retry-after")).to.equal("1");
    release();
    expect((await held).status).to.equal(200);
    expect(identity.asked, "the refused login was not checked").to.have.length(1);
    expect((await login()).status).to.equal(200);
  });
});
