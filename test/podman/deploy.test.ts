/**
 * `make test-deploy`: the manifests, played. The podman overlay (deploy/overlays/podman) rendered
 * by the pinned kustomize; Redis and the embedded store (FerretDB) as pods; two data, two auth
 * and one console pod made from the Deployments' templates, with the images `make images` built
 * (non-root, read-only root filesystem, as the manifests ask) and the secrets of the rendered
 * Kubernetes Secret; the edge (nginx rendered from the routing table) in front, on 127.0.0.1.
 * Through the edge: the README's walk-through, a live query, a webhook delivery. Then, under a
 * bounded load of writes and reads whose answers are recorded: a data pod's container is killed,
 * and every data and auth pod is replaced one at a time, as a rolling update replaces them.
 * No acknowledged write may be lost; no request may fail but those in flight on the killed
 * container. Everything it starts is removed at the end, also when a step fails.
 *
 * TEST_DEPLOY_SMOKE=1 (`make test-deploy-smoke`): all but the rolling restart.
 */
import { expect } from "chai";
import { freePort } from "../../services/dev-stack/src/stores.ts";
import { adminClient, call, keyHeader, projectClient } from "../support/http.ts";
import { openSse } from "../support/sse.ts";
import { until } from "../support/until.ts";
import { runWalkThrough } from "../support/walkthrough.ts";
import { containerLogs, type PlayedPod, PodmanCluster, podman } from "./cluster.ts";

const SMOKE = ["1", "true", "yes"].includes(process.env.TEST_DEPLOY_SMOKE ?? "");
const RECEIVER_PORT = 9099;

/** The test's webhook receiver: a sidecar of each data pod, on the pod's loopback; it prints what it gets. */
const receiver = {
  name: "webhook-receiver",
  image: "localhost/tessera-data:dev",
  imagePullPolicy: "Never",
  command: [
    "node",
    "-e",
    `require("http").createServer((q, s) => { let b = ""; q.on("data", (c) => (b += c));
      q.on("end", () => { console.log(JSON.stringify({ id: q.headers["webhook-id"], body: b })); s.end(); });
    }).listen(${RECEIVER_PORT}, "127.0.0.1")`,
  ],
  securityContext: {
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ["ALL"] },
  },
};

interface Outcome {
  what: "write" | "read";
  name?: string;
  startedAt: number;
  endedAt: number;
  status: number;
  message?: string;
}

describe("the manifests, played on podman (make test-deploy)", function () {
  this.timeout(30 * 60_000);
  const cluster = new PodmanCluster();
  let base = "";
  let operatorToken = "";
  const figures: string[] = [];
  const say = (line: string) => {
    figures.push(line);
    process.stdout.write(`      ${line}\n`);
  };

  // Interrupted (Ctrl-C, a CI time limit): what was started is removed all the same.
  const interrupted = (signal: NodeJS.Signals) => {
    void cluster.close().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);

  before(async () => {
    const started = Date.now();
    await cluster.start();
    const stores = [
      await cluster.playPod("tessera-redis", { name: "tessera-redis" }),
      await cluster.playPod("tessera-ferretdb", { name: "tessera-ferretdb" }),
    ];
    await cluster.waitReady(stores);
    const services: PlayedPod[] = [];
    for (const deployment of ["tessera-data", "tessera-data"]) {
      services.push(await cluster.playPod(deployment, { sidecars: [receiver] }));
    }
    for (const deployment of ["tessera-auth", "tessera-auth", "tessera-console"]) {
      services.push(await cluster.playPod(deployment));
    }
    await cluster.waitReady(services);
    await cluster.playEdge(await freePort());
    base = cluster.edgeUrl;
    await until(
      "the edge answers /readyz",
      async () => (await fetch(`${base}/readyz`)).status === 200,
      120_000,
    );
    operatorToken = cluster.secret("ADMIN_TOKEN");
    say(
      `cold start: ${cluster.pods.size} pods ready, the edge ready, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  });

  // When a step failed: the last lines each pod's main container logged, before the pods go.
  let failed = false;
  afterEach(function () {
    if (this.currentTest?.state === "failed") failed = true;
  });

  after(async () => {
    if (failed) {
      for (const pod of cluster.pods.values()) {
        const logs = await containerLogs(pod.container, 15);
        process.stdout.write(
          `\n      ${pod.container}, its last lines:\n${logs.replace(/^/gm, "        ")}\n`,
        );
      }
      const edge = (await cluster.edgeErrors()).split("\n").slice(-15).join("\n");
      process.stdout.write(
        `\n      the edge's error log, its last lines:\n${edge.replace(/^/gm, "        ")}\n`,
      );
    }
    if (figures.length)
      process.stdout.write(`\n      figures:\n${figures.map((f) => `        ${f}`).join("\n")}\n`);
    await cluster.close();
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
  });

  it("plays the overlay's Deployments, ConfigMaps and Secret; the rest is what a cluster's controllers do", () => {
    const kinds = new Set(cluster.objects.map((o) => o.kind));
    const notPlayed = [...kinds].filter((k) => !PodmanCluster.PLAYED.has(k)).sort();
    expect(notPlayed).to.deep.equal([
      "HorizontalPodAutoscaler",
      "Ingress",
      "NetworkPolicy",
      "PodDisruptionBudget",
      "Service",
      "ServiceAccount",
    ]);
  });

  it("runs the services as the manifests ask: a non-root user, a read-only root filesystem, secrets from the Secret", async () => {
    for (const pod of [...cluster.pods.values()].filter((p) =>
      /^tessera-(data|auth|console)-/.test(p.name),
    )) {
      const [user, readOnly] = (
        await podman([
          "inspect",
          pod.container,
          "--format",
          "{{.Config.User}} {{.HostConfig.ReadonlyRootfs}}",
        ])
      )
        .trim()
        .split(" ");
      expect(user, pod.name).to.match(/^10001/);
      expect(readOnly, pod.name).to.equal("true");
      const write = await podman(["exec", pod.container, "sh", "-c", "touch /app/x 2>&1 || true"]);
      expect(write, pod.name).to.match(/Read-only file system/);
    }
    const env = await podman(["exec", "tessera-data-1-data", "sh", "-c", "echo $SERVICE_TOKEN"]);
    expect(env.trim()).to.equal(cluster.secret("SERVICE_TOKEN"));
  });

  it("runs the README's walk-through through the edge", async () => {
    const { calls, output } = await runWalkThrough(base, operatorToken);
    expect(calls.length).to.be.greaterThan(15);
    for (const c of calls) expect(c.status, `${c.args}\n${output}`).to.be.within(200, 299);
    expect(output).to.not.contain('"errorCode"');
  });

  let key = "";
  it("serves a live query and delivers a webhook through the edge", async () => {
    const admin = adminClient(base, operatorToken);
    key = await admin.keyWith("acme", "demo", ["Full access"]);
    const demo = projectClient(base, "acme", "demo");
    const live = await openSse(`${base}${demo.root}/customer`, keyHeader(key));
    try {
      const hook = await admin.send("POST", "/accounts/acme/projects/demo/webhooks", {
        url: `http://127.0.0.1:${RECEIVER_PORT}/hooks`,
        tables: ["customer"],
        verbs: ["INSERT"],
      });
      expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
      const insert = await demo.post(key, "customer", { name: "Live Co", credit_limit: 5 });
      expect(insert.status, JSON.stringify(insert.body)).to.equal(201);
      const event = await live.next((e) => JSON.stringify(e.data).includes("Live Co"));
      expect(event.event).to.be.a("string");
      let delivered = "";
      await until(
        "a data pod's receiver got the delivery",
        async () => {
          for (const pod of ["tessera-data-1", "tessera-data-2"]) {
            delivered += await podman(["logs", `${pod}-webhook-receiver`]).catch(() => "");
          }
          return delivered.includes("Live Co");
        },
        60_000,
      );
      expect(delivered).to.match(/"id":"msg_/);
    } finally {
      live.close();
    }
  });

  it("loses no acknowledged write and fails only requests in flight on a killed container, through a kill and a rolling restart", async () => {
    const demo = projectClient(base, "acme", "demo");
    const outcomes: Outcome[] = [];
    let stop = false;
    let written = 0;
    // A bound on the load, well above what the phases below take (a quiet machine answers ~200
    // requests a second: 20,000 ran out during a 94 s rolling restart, before the last check).
    const LIMIT = 200_000;
    const worker = async (n: number) => {
      for (let i = 0; !stop && outcomes.length < LIMIT; i++) {
        const name = `load-${n}-${i}`;
        for (const [what, request] of [
          ["write", () => demo.post(key, "customer", { name, credit_limit: i })],
          ["read", () => demo.get(key, "customer?pagesize=5")],
        ] as const) {
          const startedAt = Date.now();
          const r = await request().then(
            (x) => ({ status: x.status, message: x.body?.errorMessage as string | undefined }),
            (err: Error & { cause?: { code?: string } }) => ({
              status: 0,
              message: `${err.message} (${err.cause?.code ?? err.cause})`,
            }),
          );
          outcomes.push({
            what,
            name: what === "write" ? name : undefined,
            startedAt,
            endedAt: Date.now(),
            ...r,
          });
          if (what === "write" && r.status === 201) written++;
        }
      }
    };
    const running = Array.from({ length: 4 }, (_, n) => worker(n));
    const phases: { what: string; from: number; to: number }[] = [];
    try {
      await until("writes are acknowledged", async () => written > 20, 60_000);

      // A data pod's container dies. As the kubelet would (restartPolicy Always; podman does not
      // restart a container it was told to kill), it is started again. Meanwhile the edge finds
      // the pod refusing connections and sends requests to the other pod (nginx's own failover,
      // before any endpoints controller would have noticed); the service listens once ready.
      const victim = cluster.pods.get("tessera-data-1")!;
      const killFrom = Date.now();
      await podman(["kill", "--signal", "KILL", victim.container]);
      const killedAt = Date.now();
      await podman(["wait", victim.container]);
      await podman(["start", victim.container]);
      await cluster.waitReady([victim]);
      phases.push({ what: "kill", from: killFrom, to: Date.now() });
      say(
        `kill: ${victim.container} killed; back and ready after ${((Date.now() - killedAt) / 1000).toFixed(1)} s`,
      );

      if (!SMOKE) {
        // The rolling restart: each data and auth pod in turn gets a ready replacement (surge 1,
        // maxUnavailable 0), leaves the edge, runs its pre-stop hook, gets SIGTERM and drains.
        const from = Date.now();
        for (const old of [...cluster.pods.values()].filter((p) =>
          /^tessera-(data|auth)-\d+$/.test(p.name),
        )) {
          const fresh = await cluster.playPod(
            old.service,
            old.service === "tessera-data" ? { sidecars: [receiver] } : {},
          );
          await cluster.waitReady([fresh]);
          await cluster.setEndpoints(cluster.endpointsWithout(old.name));
          await cluster.terminate(old);
        }
        phases.push({ what: "rolling restart", from, to: Date.now() });
        say(
          `rolling restart: every data and auth pod replaced in ${((Date.now() - from) / 1000).toFixed(1)} s`,
        );
      }
      const before = written;
      await until("more writes after the last change", async () => written > before + 20, 60_000);
    } finally {
      stop = true;
      await Promise.all(running);
    }

    // What the store holds afterwards.
    const stored = new Set<string>();
    for (let page = 0; ; page++) {
      const r = await call(base, "GET", `${demo.root}/customer?pagesize=1000&offset=${page * 1000}`, {
        headers: keyHeader(key),
      });
      expect(r.status).to.equal(200);
      for (const row of r.body as { name: string }[]) stored.add(row.name);
      if ((r.body as unknown[]).length < 1000) break;
    }

    const failed = outcomes.filter((o) => o.status < 200 || o.status > 299);
    const kill = phases.find((p) => p.what === "kill")!;
    // In flight on the killed container: started before the kill and answered after it.
    const inFlightAtKill = (o: Outcome) => o.startedAt <= kill.from + 1000 && o.endedAt >= kill.from;
    // An nginx reload (the harness's endpoint update; ingress-nginx updates endpoints without one)
    // closes the kept-alive client connections that are idle: a request the client sent on one
    // at that instant meets a closed connection. nginx never read it: no service saw it, and a
    // write of it is not in the store.
    const closedByReload = (o: Outcome) =>
      o.status === 0 &&
      // undici reports the close as a socket error or as a reset, depending on when it came.
      /UND_ERR_SOCKET|ECONNRESET/.test(o.message ?? "") &&
      cluster.reloads.some((r) => o.startedAt >= r - 1000 && o.startedAt <= r + 3000) &&
      (o.what === "read" || !stored.has(o.name!));
    const rolling = phases.find((p) => p.what === "rolling restart");
    const duringRolling = rolling
      ? outcomes.filter((o) => o.startedAt >= rolling.from && o.startedAt <= rolling.to)
      : [];
    say(
      `load: ${outcomes.length} requests (${outcomes.filter((o) => o.what === "write").length} writes, ${written} acknowledged); ` +
        `${failed.length} failed: ${failed.filter(inFlightAtKill).length} in flight at the kill, ` +
        `${failed.filter(closedByReload).length} sent on a connection an edge reload closed (${cluster.reloads.length} reloads); ` +
        `${duringRolling.length} during the rolling restart, ${duringRolling.filter((o) => failed.includes(o)).length} failed`,
    );
    const at = (t: number) => `${((t - kill.from) / 1000).toFixed(2)} s`;
    for (const o of failed) {
      say(
        `failed: ${o.what} ${o.name ?? ""} ${o.status} ${o.message ?? ""}, ${at(o.startedAt)} to ${at(o.endedAt)} from the kill`,
      );
    }
    expect(
      failed
        .filter((o) => !inFlightAtKill(o) && !closedByReload(o))
        .map((o) => `${o.what} ${o.name ?? ""} ${o.status} ${o.message ?? ""}`),
      await cluster.edgeErrors(),
    ).to.deep.equal([]);
    expect(failed.filter(inFlightAtKill).length, "at most one in flight per worker").to.be.at.most(4);

    // Every acknowledged write is there.
    const acknowledged = outcomes.filter((o) => o.what === "write" && o.status === 201).map((o) => o.name!);
    const lost = acknowledged.filter((name) => !stored.has(name));
    say(`acknowledged writes lost: ${lost.length} of ${acknowledged.length}`);
    expect(lost).to.deep.equal([]);
  });
});
