/**
 * What a cluster would do around `podman kube play`, for `make test-deploy` (docs/operations.md,
 * "Run it on podman"): the overlay deploy/overlays/podman rendered by the pinned kustomize; its
 * Secrets made podman secrets; pods made from the Deployments' templates (the ReplicaSet
 * controller's part) and played on a podman network of their own, without DNS (the pods that stand
 * in for Services have fixed addresses, which every pod's /etc/hosts names); their readiness probes run as
 * the kubelet runs them; the edge pod (nginx rendered from the routing table, playing the Ingress
 * controller and the Service tessera-data) told which pods are ready (the endpoints controller's
 * part); a pod replaced as a rolling update replaces it (pre-stop hook, then SIGTERM with the
 * pod's grace period). Everything it creates carries the run's network and is removed by close().
 */
import { execFile, execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { nginxConfig } from "../../shared/routing/nginx.ts";
import type { ServiceName } from "../../shared/routing/routes.ts";
import { byName, type K8sObject, ofKind, parseYamlStream, repoRoot, requireTool } from "../deploy/support.ts";

const exec = promisify(execFile);
export const CONTAINERS_CONF = path.join(repoRoot, "deploy/podman/containers.conf");
const EDGE_PORT = 8080;
const DATA_SERVICE_PORT = 8082;

/** Runs podman with the project's containers.conf; throws with its stderr on failure. */
async function runPodman(args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  try {
    return await exec("podman", args, {
      env: { ...process.env, CONTAINERS_CONF },
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`podman ${args.join(" ")}: ${e.stderr?.trim() || e.message}`);
  }
}

/** Runs podman with the project's containers.conf: its standard output; throws with its stderr on failure. */
export async function podman(args: string[], timeoutMs = 180_000): Promise<string> {
  return (await runPodman(args, timeoutMs)).stdout;
}

/** The last `lines` lines a container wrote: its standard output, then its standard error. */
export async function containerLogs(container: string, lines: number): Promise<string> {
  try {
    const { stdout, stderr } = await runPodman(["logs", "--tail", String(lines), container], 30_000);
    return `${stdout}${stderr}`;
  } catch (err) {
    return `(no logs: ${(err as Error).message})`;
  }
}

const yaml = (objects: object[]) => objects.map((o) => JSON.stringify(o)).join("\n---\n");

interface Container {
  name: string;
  readinessProbe?: { httpGet?: { path: string; port: string | number }; exec?: { command: string[] } };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  ports?: { name?: string; containerPort: number }[];
  volumeMounts?: { name: string; mountPath: string }[];
  [k: string]: unknown;
}

export interface PlayedPod {
  name: string;
  service: string;
  /** The pod's address on the run's network (what a cluster's Endpoints list). */
  ip: string;
  /** The pod's main container (podman names it `<pod>-<container>`). */
  container: string;
  spec: {
    containers: Container[];
    terminationGracePeriodSeconds?: number;
    volumes?: { name: string; emptyDir?: object; [k: string]: unknown }[];
    hostAliases?: { ip: string; hostnames: string[] }[];
  };
}

/**
 * The pods that stand in for a cluster's Services, by the Service's name: they get fixed addresses
 * on the run's network, and every pod finds them by name in its /etc/hosts (`hostAliases`), as a
 * cluster's pods find a Service's ClusterIP through its DNS.
 */
const SERVICE_PODS = ["tessera-redis", "tessera-ferretdb", "tessera-edge"] as const;

/** The last usable addresses of an IPv4 subnet (`10.89.3.0/24` -> 10.89.3.254, .253, …), one per name. */
export function addressesAtTheEnd<T extends string>(subnet: string, names: readonly T[]): Record<T, string> {
  const match = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(subnet);
  if (!match) throw new Error(`not an IPv4 subnet: ${subnet}`);
  const [a, b, c, d, bits] = match.slice(1).map(Number) as [number, number, number, number, number];
  const size = 2 ** (32 - bits);
  if (size < names.length + 4)
    throw new Error(`subnet ${subnet} is too small for ${names.length} fixed addresses`);
  const address = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
  const broadcast = address - (address % size) + size - 1;
  const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
  return Object.fromEntries(names.map((name, i) => [name, dotted(broadcast - 1 - i)])) as Record<T, string>;
}

export class PodmanCluster {
  readonly objects: K8sObject[];
  readonly network: string;
  readonly pods = new Map<string, PlayedPod>();
  private readonly secrets: string[] = [];
  private readonly volumes: string[] = [];
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), "tessera-podman-"));
  private readonly counters = new Map<string, number>();
  private edgeReplicas: Partial<Record<ServiceName, string[]>> = {};
  /** The fixed addresses of the pods that stand in for Services (known once the network exists). */
  private serviceAddresses?: Record<(typeof SERVICE_PODS)[number], string>;
  edgeUrl = "";
  /** When the edge was told of other endpoints (an nginx reload each). */
  readonly reloads: number[] = [];

  constructor() {
    const kustomize = requireTool("kustomize");
    const rendered = execFileSync(kustomize, ["build", path.join(repoRoot, "deploy/overlays/podman")], {
      encoding: "utf8",
    });
    this.objects = parseYamlStream(rendered);
    this.network = `tessera-deploy-${process.pid}`;
    chmodSync(this.dir, 0o755);
  }

  /** The kinds `kube play` is given (the rest is what a cluster's controllers do; see the docs). */
  static readonly PLAYED = new Set(["Deployment", "ConfigMap", "Secret"]);

  async start(): Promise<void> {
    for (const name of ["tessera-edge", "tessera-redis", "tessera-ferretdb"]) {
      if (
        (await podman(["pod", "exists", name]).then(
          () => true,
          () => false,
        )) === true
      ) {
        throw new Error(
          `a pod named ${name} exists already: another make test-deploy is running, or left it`,
        );
      }
    }
    // No DNS on the network: podman 4.3's aardvark-dns drops queries while it reloads for each
    // container started (containers/aardvark-dns#389), and under load a lookup then waits out the
    // resolver's 5 s timeout, twice. Pods find the Services' stand-ins by /etc/hosts instead.
    await podman(["network", "create", "--disable-dns", this.network]);
    const subnet = (
      await podman(["network", "inspect", this.network, "--format", "{{range .Subnets}}{{.Subnet}} {{end}}"])
    )
      .trim()
      .split(/\s+/)
      .find((net) => net.includes("."));
    if (!subnet) throw new Error(`the network ${this.network} has no IPv4 subnet`);
    this.serviceAddresses = addressesAtTheEnd(subnet, SERVICE_PODS);
    // podman 4.3's kube play keeps a Secret document as YAML and then cannot read it for
    // secretKeyRef (it expects the data map as JSON): the Secret is given as a podman secret.
    for (const secret of ofKind(this.objects, "Secret")) {
      const file = path.join(this.dir, `${secret.metadata.name}.json`);
      writeFileSync(file, JSON.stringify(secret.data ?? {}), { mode: 0o600 });
      await podman(["secret", "rm", secret.metadata.name]).catch(() => "");
      await podman(["secret", "create", secret.metadata.name, file]);
      rmSync(file);
      this.secrets.push(secret.metadata.name);
    }
  }

  /** The value of a key of a rendered Secret (e.g. the operator's token). */
  secret(key: string): string {
    const secret = ofKind(this.objects, "Secret")[0]!;
    return Buffer.from(secret.data[key], "base64").toString("utf8");
  }

  /**
   * A pod from the Deployment `deployment`'s template, played; `name` defaults to
   * `<deployment>-<n>`. `sidecars` are added containers (the test's own, e.g. a receiver).
   */
  async playPod(
    deployment: string,
    options: { name?: string; sidecars?: Container[] } = {},
  ): Promise<PlayedPod> {
    const d = byName(this.objects, "Deployment", deployment);
    const n = (this.counters.get(deployment) ?? 0) + 1;
    this.counters.set(deployment, n);
    const name = options.name ?? `${deployment}-${n}`;
    const spec = structuredClone(d.spec.template.spec) as PlayedPod["spec"];
    spec.containers.push(...(options.sidecars ?? []));
    // podman 4.3's kube play publishes every containerPort on the host (a cluster does not): the
    // pods are played without them and reached by pod name on their network.
    const played = structuredClone(spec);
    for (const c of played.containers) delete c.ports;
    // podman 4.3 makes an emptyDir a named volume, the same for every pod that names it alike (a
    // cluster gives each pod its own): each is named after its pod here, and removed with it.
    for (const v of played.volumes ?? []) {
      if (!v.emptyDir) continue;
      for (const c of played.containers) {
        for (const m of c.volumeMounts ?? []) if (m.name === v.name) m.name = `${name}-${v.name}`;
      }
      v.name = `${name}-${v.name}`;
      this.volumes.push(v.name);
    }
    played.hostAliases = this.hostAliases();
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels: d.spec.template.metadata.labels },
      spec: played,
    };
    const file = path.join(this.dir, `${name}.yaml`);
    writeFileSync(file, yaml([...ofKind(this.objects, "ConfigMap"), pod]));
    const container = `${name}-${spec.containers[0]!.name}`;
    const result = { name, service: deployment, container, ip: await this.play(file, name, container), spec };
    this.pods.set(name, result);
    return result;
  }

  /** The /etc/hosts entries of every pod: the Services' stand-ins by name. */
  private hostAliases(): { ip: string; hostnames: string[] }[] {
    if (!this.serviceAddresses) throw new Error("start() first: the network does not exist yet");
    return Object.entries(this.serviceAddresses).map(([name, ip]) => ({ ip, hostnames: [name] }));
  }

  /** Plays a pod's file on the run's network (a Service's stand-in at its fixed address); its address. */
  private async play(file: string, name: string, container: string): Promise<string> {
    const fixed = this.serviceAddresses?.[name as (typeof SERVICE_PODS)[number]];
    await podman(["kube", "play", "--network", this.network, ...(fixed ? ["--ip", fixed] : []), file]);
    const ip = (
      await podman([
        "inspect",
        container,
        "--format",
        "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
      ])
    ).trim();
    if (!ip) throw new Error(`${name} has no address on ${this.network}`);
    return ip;
  }

  /** The pod's readiness probe, run as the kubelet runs it (httpGet from inside the pod: its loopback). */
  async ready(pod: PlayedPod): Promise<boolean> {
    const main = pod.spec.containers[0]!;
    const probe = main.readinessProbe;
    if (!probe) {
      const state = await podman(["inspect", pod.container, "--format", "{{.State.Running}}"]).catch(
        () => "",
      );
      return state.trim() === "true";
    }
    const port =
      typeof probe.httpGet?.port === "string"
        ? main.ports?.find((p) => p.name === probe.httpGet!.port)?.containerPort
        : probe.httpGet?.port;
    const command = probe.httpGet
      ? [
          "node",
          "-e",
          `fetch("http://127.0.0.1:${port}${probe.httpGet.path}",{signal:AbortSignal.timeout(3000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`,
        ]
      : probe.exec!.command;
    return podman(["exec", pod.container, ...command], 20_000).then(
      () => true,
      () => false,
    );
  }

  async waitReady(pods: PlayedPod[], timeoutMs = 240_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const waiting = new Set(pods);
    while (waiting.size > 0) {
      for (const pod of [...waiting]) if (await this.ready(pod)) waiting.delete(pod);
      if (waiting.size === 0) return;
      if (Date.now() > deadline) {
        const logs = await Promise.all(
          [...waiting].map(
            async (p) =>
              `${p.name}:\n${await podman(["logs", "--tail", "30", p.container]).catch((e) => String(e))}`,
          ),
        );
        throw new Error(
          `not ready within ${timeoutMs} ms: ${[...waiting].map((p) => p.name).join(", ")}\n${logs.join("\n")}`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  private edgeConfig(): string {
    return nginxConfig({
      listen: `0.0.0.0:${EDGE_PORT}`,
      upstreams: this.edgeReplicas,
      maxBodyBytes: 4 * 1024 * 1024,
      runDir: "/edge",
      serviceListeners: [{ listen: `0.0.0.0:${DATA_SERVICE_PORT}`, service: "data" }],
    });
  }

  /** The played pods of each service but `except`, as `<pod address>:<port>` (what the endpoints controller keeps). */
  endpointsWithout(...except: string[]): Partial<Record<ServiceName, string[]>> {
    const out: Partial<Record<ServiceName, string[]>> = {};
    for (const pod of this.pods.values()) {
      const service = pod.service.replace(/^tessera-/, "") as ServiceName;
      if (!["auth", "data", "console"].includes(service) || except.includes(pod.name)) continue;
      const port = pod.spec.containers[0]!.ports![0]!.containerPort;
      out[service] = [...(out[service] ?? []), `${pod.ip}:${port}`];
    }
    return out;
  }

  /** Plays the edge pod in front of the pods played so far, published on 127.0.0.1:`hostPort`. */
  async playEdge(hostPort: number): Promise<void> {
    this.edgeReplicas = this.endpointsWithout();
    const edgeDir = path.join(this.dir, "edge");
    mkdirSync(edgeDir, { recursive: true });
    chmodSync(edgeDir, 0o777);
    writeFileSync(path.join(edgeDir, "nginx.conf"), this.edgeConfig());
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "tessera-edge", labels: { "app.kubernetes.io/name": "tessera-edge" } },
      spec: {
        securityContext: { runAsNonRoot: true, runAsUser: 10003, runAsGroup: 10003 },
        containers: [
          {
            name: "edge",
            image: "localhost/tessera-edge:dev",
            imagePullPolicy: "Never",
            ports: [
              { containerPort: EDGE_PORT, hostPort, hostIP: "127.0.0.1" },
              { containerPort: DATA_SERVICE_PORT },
            ],
            securityContext: {
              readOnlyRootFilesystem: true,
              allowPrivilegeEscalation: false,
              capabilities: { drop: ["ALL"] },
            },
            volumeMounts: [{ name: "edge", mountPath: "/edge" }],
          },
        ],
        volumes: [{ name: "edge", hostPath: { path: edgeDir, type: "Directory" } }],
        hostAliases: this.hostAliases(),
      },
    };
    const file = path.join(this.dir, "tessera-edge.yaml");
    writeFileSync(file, yaml([pod]));
    const container = "tessera-edge-edge";
    const ip = await this.play(file, "tessera-edge", container);
    this.pods.set("tessera-edge", {
      name: "tessera-edge",
      service: "tessera-edge",
      container,
      ip,
      spec: pod.spec as unknown as PlayedPod["spec"],
    });
    this.edgeUrl = `http://127.0.0.1:${hostPort}`;
  }

  /** Tells the edge which pods serve each service now, and has it take that up gracefully. */
  async setEndpoints(endpoints: Partial<Record<ServiceName, string[]>>): Promise<void> {
    this.reloads.push(Date.now());
    this.edgeReplicas = endpoints;
    writeFileSync(path.join(this.dir, "edge", "nginx.conf"), this.edgeConfig());
    await podman([
      "exec",
      "tessera-edge-edge",
      "nginx",
      "-p",
      "/edge",
      "-c",
      "/edge/nginx.conf",
      "-e",
      "/edge/error.log",
      "-s",
      "reload",
    ]);
  }

  /** As the kubelet ends a pod: the pre-stop hook, then SIGTERM, SIGKILL after the grace period; then it is removed. */
  async terminate(pod: PlayedPod): Promise<void> {
    const main = pod.spec.containers[0]!;
    const preStop = main.lifecycle?.preStop?.exec?.command;
    if (preStop) await podman(["exec", pod.container, ...preStop], 60_000);
    await podman(
      ["pod", "stop", "--time", String(pod.spec.terminationGracePeriodSeconds ?? 30), pod.name],
      120_000,
    );
    await podman(["pod", "rm", "--force", pod.name]);
    for (const volume of this.volumes.filter((v) => v.startsWith(`${pod.name}-`))) {
      await podman(["volume", "rm", "--force", volume]).catch(() => "");
    }
    this.pods.delete(pod.name);
  }

  async edgeErrors(): Promise<string> {
    const file = path.join(this.dir, "edge", "error.log");
    return existsSync(file) ? readFileSync(file, "utf8") : "";
  }

  /** Removes every pod, secret and the network this run created, and its files. */
  async close(): Promise<void> {
    for (const name of this.pods.keys())
      await podman(["pod", "rm", "--force", "--time", "5", name]).catch(() => "");
    this.pods.clear();
    for (const volume of this.volumes) await podman(["volume", "rm", "--force", volume]).catch(() => "");
    for (const secret of this.secrets) await podman(["secret", "rm", secret]).catch(() => "");
    await podman(["network", "rm", "--force", this.network]).catch(() => "");
    rmSync(this.dir, { recursive: true, force: true });
  }
}
