/**
 * Many replicas (`make run` with DATA_REPLICAS=2 AUTH_REPLICAS=2, the real stack process):
 * under a load of logins and reads one data replica is killed. Only requests it had in flight
 * fail; requests started after it is gone succeed (the edge sends them to the other replica);
 * the stack starts the killed one again and it rejoins (it serves requests again). A definition
 * change made through one replica reaches every replica (cache invalidation over Redis pub/sub).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { freePort, portAnswers } from "../../services/dev-stack/src/stores.ts";
import { demoProject } from "../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient } from "../support/http.ts";
import { isolationPrefix, testStores } from "../support/stores.ts";

const STACK = path.resolve(import.meta.dirname, "../../services/dev-stack/src/stack.ts");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Replica {
  service: string;
  index: number;
  pid: number;
  url: string;
}

describe("many replicas: two data and two auth processes behind the edge", function () {
  this.timeout(180_000);
  let stack: ChildProcess;
  let dir: string;
  let base: string;
  const adminToken = `admin-${isolationPrefix()}`;
  const replicas: Replica[] = [];
  let output = "";

  const dataReplicas = () => {
    const latest = new Map<number, Replica>();
    for (const r of replicas.filter((x) => x.service === "data")) latest.set(r.index, r);
    return [...latest.values()];
  };

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-replicas-"));
    const { mongoUrl, redisEnv } = await testStores();
    const prefix = isolationPrefix();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    stack = spawn(process.execPath, [STACK], {
      env: {
        ...process.env,
        ...redisEnv,
        PORT: String(port),
        DATA_DIR: dir,
        MONGO_URL: mongoUrl,
        META_DB: `${prefix}meta`,
        TENANT_DB_PREFIX: prefix,
        REDIS_PREFIX: `tessera-test:${prefix}`,
        ADMIN_TOKEN: adminToken,
        ARGON2_MEMORY_KIB: "1024",
        LOG_LEVEL: "error",
        DATA_REPLICAS: "2",
        AUTH_REPLICAS: "2",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    stack.stdout!.setEncoding("utf8").on("data", (text: string) => {
      output += text;
      for (const m of text.matchAll(/(data|auth) replica (\d+): pid (\d+) on (\S+)/g)) {
        replicas.push({ service: m[1]!, index: Number(m[2]), pid: Number(m[3]), url: m[4]! });
      }
    });
    stack.stderr!.setEncoding("utf8").on("data", (text: string) => {
      output += text;
    });
    for (let i = 0; i < 1200 && !output.includes("ready:"); i++) {
      if (stack.exitCode !== null) throw new Error(`the stack exited:\n${output}`);
      await sleep(100);
    }
    expect(output, output).to.include("ready:");
  });

  after(async () => {
    if (stack && stack.exitCode === null) {
      stack.kill("SIGTERM");
      await new Promise((r) => stack.once("exit", r));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("starts two processes of each service", () => {
    expect(dataReplicas()).to.have.length(2);
    expect(replicas.filter((r) => r.service === "auth")).to.have.length(2);
  });

  it("kill one data replica under load: only its in-flight requests fail; it restarts and rejoins; definition changes reach every replica", async () => {
    const admin = adminClient(base, adminToken);
    expect((await admin.putAccount("acme")).status).to.be.oneOf([200, 201]);
    expect((await admin.putProject("acme", "demo", demoProject())).status).to.be.oneOf([200, 201]);
    await admin.putUser("acme", "demo", "alice", { password: "alice-password", roles: ["Full access"] });
    const demo = projectClient(base, "acme", "demo");
    const key = await admin.keyWith("acme", "demo", ["Full access"]);

    const outcomes: { what: string; startedAt: number; endedAt: number; status: number; message?: string }[] =
      [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        for (const [what, request] of [
          ["login", () => demo.login({ username: "alice", password: "alice-password" })],
          ["read", () => demo.get(key, "customer")],
        ] as const) {
          const startedAt = Date.now();
          const { status, message } = await request().then(
            (r) => ({ status: r.status, message: r.body?.errorMessage as string | undefined }),
            (err: Error) => ({ status: 0, message: err.message }),
          );
          outcomes.push({ what, startedAt, endedAt: Date.now(), status, message });
        }
      }
    };
    const running = Array.from({ length: 4 }, worker);
    await sleep(1500);
    const [victim] = dataReplicas();
    process.kill(victim!.pid, "SIGKILL");
    // Dying takes the kernel a moment (every thread ends before the sockets close): connections the
    // replica accepted until its port refuses them were in flight too.
    while (await portAnswers("127.0.0.1", Number(new URL(victim!.url).port), 50)) await sleep(2);
    const killedAt = Date.now();
    // The stack starts it again; it rejoins once ready.
    let restarted: Replica | undefined;
    for (let i = 0; i < 600 && !restarted; i++) {
      await sleep(100);
      restarted = dataReplicas().find((r) => r.index === victim!.index && r.pid !== victim!.pid);
    }
    expect(restarted, output).to.not.equal(undefined);
    for (let i = 0; i < 600; i++) {
      if ((await call(restarted!.url, "GET", "/readyz").catch(() => ({ status: 0 }))).status === 200) break;
      await sleep(100);
    }
    await sleep(1000);
    stop = true;
    await Promise.all(running);

    const failed = outcomes.filter((o) => o.status !== 200);
    const startedAfterKill = outcomes.filter((o) => o.startedAt > killedAt);
    console.log(
      `      ${outcomes.length} requests, ${failed.length} failed (all started before the kill: ${failed.every((o) => o.startedAt <= killedAt)}); ${startedAfterKill.length} started after the kill, all succeeded: ${startedAfterKill.every((o) => o.status === 200)}`,
    );
    expect(
      failed.filter((o) => o.startedAt > killedAt),
      "requests started after the kill",
    ).to.deep.equal([]);
    // Those that failed were in flight when it died: at most one per worker, answered 503.
    expect(failed.length).to.be.at.most(4);
    for (const o of failed) expect(o.status).to.equal(503);

    // The restarted replica serves requests again, with the project it never saw before its restart.
    const direct = (replica: Replica, table: string) =>
      call(replica.url, "GET", `/rest/acme/demo/v1/${table}`, { headers: keyHeader(key) });
    for (const replica of dataReplicas()) expect((await direct(replica, "customer")).status).to.equal(200);

    // Both replicas have the project cached; a change made through the edge (one of them) reaches both.
    const changed = demoProject() as { tables: Record<string, unknown> };
    changed.tables.supplier = {
      columns: { id: { type: "integer", generated: true }, name: { type: "string" } },
      key: ["id"],
    };
    for (const replica of dataReplicas()) expect((await direct(replica, "supplier")).status).to.equal(404);
    const put = await admin.putProject("acme", "demo", changed);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    for (const replica of dataReplicas()) {
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await direct(replica, "supplier")).status;
        if (status !== 200) await sleep(100);
      }
      expect(status, `replica ${replica.index} sees the new table`).to.equal(200);
    }
  });
});
