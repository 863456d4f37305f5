/**
 * Renders deploy/base and every overlay with the pinned kustomize, validates
 * every object strictly against the Kubernetes API schemas (offline), and
 * checks the platform's policies on the result.
 */
import { expect } from "chai";
import {
  authConfigSchema,
  dataConfigSchema,
  parseConfig,
  trustedProxiesSetting,
} from "../../shared/config/config.ts";
import { compileTrustedProxies } from "../../shared/http/forwarding.ts";
import {
  baseName,
  byName,
  type Container,
  containersOf,
  isEmptySelector,
  type K8sObject,
  kubeconform,
  type NetworkPolicy,
  type NetworkPolicyRule,
  ofKind,
  problems,
  type Rendered,
  render,
  SECRET_KEYS,
  selects,
  TARGETS,
  type Target,
  type Workload,
  workloads,
} from "./support.ts";

const SERVICES = [
  { name: "tessera-auth", port: 8081 },
  { name: "tessera-data", port: 8082 },
  { name: "tessera-console", port: 8083 },
];
const PRIVATE_V4 = [
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "100.64.0.0/10",
];
const PRIVATE_V6 = ["::1/128", "fc00::/7", "fe80::/10"];
const NAMESPACE: Record<Target, string | undefined> = {
  base: undefined,
  "overlays/dev": "tessera-dev",
  "overlays/prod": "tessera",
};
const MIN_REPLICAS: Record<Target, number> = { base: 2, "overlays/dev": 2, "overlays/prod": 3 };

const where = (o: K8sObject, extra = "") => `${o.kind}/${o.metadata.name}${extra ? ` ${extra}` : ""}`;
const podLabels = (w: Workload) => w.spec.template.metadata.labels;

/** Values of every ConfigMap a container takes its environment from (envFrom). */
function configEnv(objects: K8sObject[], c: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, byName(objects, "ConfigMap", from.configMapRef.name).data);
  }
  return env;
}

/** Names proxy-addr accepts for private ranges. */
const PRIVATE_NAMES = ["loopback", "linklocal", "uniquelocal"];

/** True when a TRUSTED_PROXIES entry (address, CIDR or name) lies wholly inside a private range. */
function isPrivateProxyEntry(entry: string): boolean {
  if (PRIVATE_NAMES.includes(entry)) return true;
  const [address = "", length] = entry.split("/");
  return [...PRIVATE_V4, ...PRIVATE_V6].some((block) => {
    const blockLength = Number(block.split("/")[1]);
    const inside = compileTrustedProxies([block])(address, 0);
    return inside && (length === undefined || Number(length) >= blockLength);
  });
}

/** Numeric container port that `port` (number or name) resolves to in the pods `selector` picks. */
function resolvePort(pods: Workload[], port: number | string | undefined): number | undefined {
  if (typeof port === "number" || port === undefined) return port;
  for (const w of pods) {
    for (const c of w.spec.template.spec.containers) {
      const found = c.ports?.find((p) => p.name === port);
      if (found) return found.containerPort;
    }
  }
  return undefined;
}

const rulePorts = (rule: NetworkPolicyRule, pods: Workload[]): (number | undefined)[] =>
  (rule.ports ?? [{}]).map((p) => resolvePort(pods, p.port));

for (const target of TARGETS) {
  describe(`deploy/${target}`, () => {
    let r: Rendered;
    let objects: K8sObject[];
    before(function () {
      this.timeout(60_000);
      r = render(target);
      objects = r.objects;
    });

    describe("schema validation (kubeconform -strict, Kubernetes API schemas, offline)", () => {
      it("renders objects", () => {
        expect(objects.length).to.be.greaterThan(10);
      });

      it("every rendered object is valid against its API schema", function () {
        this.timeout(30_000);
        const report = kubeconform(r.yaml);
        expect(problems(report)).to.deep.equal([]);
        expect(report.summary).to.deep.include({ invalid: 0, errors: 0, skipped: 0 });
        expect(report.summary.valid).to.equal(objects.length);
      });

      it("covers NetworkPolicy, Ingress, HPA autoscaling/v2 and PDB policy/v1", () => {
        const kinds = new Set(objects.map((o) => `${o.apiVersion} ${o.kind}`));
        for (const k of [
          "networking.k8s.io/v1 NetworkPolicy",
          "networking.k8s.io/v1 Ingress",
          "autoscaling/v2 HorizontalPodAutoscaler",
          "policy/v1 PodDisruptionBudget",
          "apps/v1 Deployment",
          "v1 Service",
          "v1 ConfigMap",
        ]) {
          expect(kinds.has(k), k).to.equal(true);
        }
      });

      it("has unique kind/name pairs", () => {
        const keys = objects.map((o) => where(o));
        expect(keys.filter((k, i) => keys.indexOf(k) !== i)).to.deep.equal([]);
      });

      if (NAMESPACE[target]) {
        it(`puts everything in namespace ${NAMESPACE[target]}, created with Pod Security "restricted"`, () => {
          const ns = byName(objects, "Namespace", NAMESPACE[target]!);
          expect(ns.metadata.labels?.["pod-security.kubernetes.io/enforce"]).to.equal("restricted");
          for (const o of objects.filter((x) => x.kind !== "Namespace")) {
            expect(o.metadata.namespace, where(o)).to.equal(NAMESPACE[target]);
          }
        });
      }
    });

    describe("containers and pods", () => {
      it("every container has cpu and memory requests and limits", () => {
        for (const w of workloads(objects)) {
          for (const c of containersOf(w.spec.template.spec)) {
            for (const kind of ["requests", "limits"] as const) {
              for (const res of ["cpu", "memory"]) {
                expect(c.resources?.[kind]?.[res], where(w, `${c.name} ${kind}.${res}`)).to.be.a("string");
              }
            }
          }
        }
      });

      it("every container has liveness, readiness and startup probes", () => {
        for (const w of workloads(objects)) {
          for (const c of w.spec.template.spec.containers) {
            expect(c.livenessProbe, where(w, `${c.name} livenessProbe`)).to.be.an("object");
            expect(c.readinessProbe, where(w, `${c.name} readinessProbe`)).to.be.an("object");
            expect(c.startupProbe, where(w, `${c.name} startupProbe`)).to.be.an("object");
          }
        }
      });

      it("every container runs as non-root, read-only root fs, no privilege escalation, drops ALL, seccomp RuntimeDefault", () => {
        for (const w of workloads(objects)) {
          const pod = w.spec.template.spec;
          for (const c of containersOf(pod)) {
            const sc = c.securityContext ?? {};
            const at = (what: string) => where(w, `${c.name} ${what}`);
            expect(sc.runAsNonRoot ?? pod.securityContext?.runAsNonRoot, at("runAsNonRoot")).to.equal(true);
            expect(sc.runAsUser ?? pod.securityContext?.runAsUser, at("runAsUser")).to.be.greaterThan(0);
            expect(sc.readOnlyRootFilesystem, at("readOnlyRootFilesystem")).to.equal(true);
            expect(sc.allowPrivilegeEscalation, at("allowPrivilegeEscalation")).to.equal(false);
            expect(sc.privileged ?? false, at("privileged")).to.equal(false);
            expect(sc.capabilities?.drop ?? [], at("capabilities.drop")).to.include("ALL");
            expect(sc.capabilities?.add ?? [], at("capabilities.add")).to.deep.equal([]);
            expect((sc.seccompProfile ?? pod.securityContext?.seccompProfile)?.type, at("seccomp")).to.equal(
              "RuntimeDefault",
            );
          }
        }
      });

      it("every container with a read-only root fs has an emptyDir at /tmp", () => {
        for (const w of workloads(objects)) {
          const pod = w.spec.template.spec;
          for (const c of containersOf(pod)) {
            const mount = c.volumeMounts?.find((m) => m.mountPath === "/tmp");
            expect(mount, where(w, `${c.name} /tmp mount`)).to.be.an("object");
            expect(
              pod.volumes?.find((v) => v.name === mount!.name)?.emptyDir,
              where(w, "/tmp emptyDir"),
            ).to.be.an("object");
          }
        }
      });

      it("no pod mounts a service account token or shares host namespaces", () => {
        for (const w of workloads(objects)) {
          const pod = w.spec.template.spec;
          expect(pod.automountServiceAccountToken, where(w, "automountServiceAccountToken")).to.equal(false);
          expect(pod.hostNetwork ?? false, where(w, "hostNetwork")).to.equal(false);
          expect(pod.hostPID ?? false, where(w, "hostPID")).to.equal(false);
          expect(pod.hostIPC ?? false, where(w, "hostIPC")).to.equal(false);
        }
        for (const sa of ofKind(objects, "ServiceAccount")) {
          expect(sa.automountServiceAccountToken, where(sa)).to.equal(false);
        }
      });

      it("every image is pinned by tag (never latest) or digest", () => {
        for (const w of workloads(objects)) {
          for (const c of containersOf(w.spec.template.spec)) {
            const image = c.image;
            const digest = /@sha256:[0-9a-f]{64}$/.test(image);
            const tag = /:([\w][\w.-]{0,127})$/.exec(image.replace(/@sha256:.*$/, ""))?.[1];
            expect(digest || (tag !== undefined && tag !== "latest"), where(w, `image ${image}`)).to.equal(
              true,
            );
          }
        }
      });
    });

    describe("tessera services", () => {
      for (const svc of SERVICES) {
        describe(svc.name, () => {
          let d: Workload;
          let c: Container;
          before(() => {
            d = byName(objects, "Deployment", svc.name) as Workload;
            c = d.spec.template.spec.containers[0]!;
          });

          it(`listens on ${svc.port} on all interfaces (PORT and HOST from the ConfigMaps)`, () => {
            expect(d.spec.template.spec.containers).to.have.length(1);
            expect(c.ports).to.deep.equal([{ name: "http", containerPort: svc.port, protocol: "TCP" }]);
            const env = configEnv(objects, c);
            expect(env.PORT).to.equal(String(svc.port));
            expect(env.HOST).to.equal("0.0.0.0");
          });

          it("probes /healthz (liveness, startup) and /readyz (readiness) on its http port", () => {
            expect(c.livenessProbe?.httpGet).to.deep.equal({ path: "/healthz", port: "http" });
            expect(c.startupProbe?.httpGet).to.deep.equal({ path: "/healthz", port: "http" });
            expect(c.readinessProbe?.httpGet).to.deep.equal({ path: "/readyz", port: "http" });
          });

          it("rolls out without dropping capacity (maxUnavailable 0)", () => {
            expect(d.spec.strategy?.type).to.equal("RollingUpdate");
            expect(d.spec.strategy?.rollingUpdate?.maxUnavailable).to.equal(0);
          });

          it(`runs at least ${MIN_REPLICAS[target]} replicas, scaled by an autoscaling/v2 HPA`, () => {
            const hpa = byName(objects, "HorizontalPodAutoscaler", svc.name);
            expect(hpa.apiVersion).to.equal("autoscaling/v2");
            expect(hpa.spec.scaleTargetRef).to.deep.equal({
              apiVersion: "apps/v1",
              kind: "Deployment",
              name: svc.name,
            });
            expect(hpa.spec.minReplicas).to.be.at.least(MIN_REPLICAS[target]);
            expect(hpa.spec.maxReplicas).to.be.greaterThan(hpa.spec.minReplicas);
            expect(hpa.spec.metrics.map((m: { resource?: { name: string } }) => m.resource?.name)).to.include(
              "cpu",
            );
            // the HPA owns the count; a replicas field would reset it on every apply
            if (d.spec.replicas !== undefined) expect(d.spec.replicas).to.be.at.least(MIN_REPLICAS[target]);
          });

          it("has a PodDisruptionBudget over its pods that still lets a node drain", () => {
            const pdb = byName(objects, "PodDisruptionBudget", svc.name);
            expect(pdb.apiVersion).to.equal("policy/v1");
            expect(selects(pdb.spec.selector, podLabels(d))).to.equal(true);
            const hpa = byName(objects, "HorizontalPodAutoscaler", svc.name);
            if (target === "overlays/prod") {
              expect(pdb.spec.maxUnavailable).to.equal(undefined);
              expect(pdb.spec.minAvailable).to.be.at.least(2);
              expect(pdb.spec.minAvailable).to.be.lessThan(hpa.spec.minReplicas);
            } else {
              const ok =
                pdb.spec.maxUnavailable !== undefined || pdb.spec.minAvailable < hpa.spec.minReplicas;
              expect(ok).to.equal(true);
            }
          });

          it("takes its secrets from tessera-secrets only (secretKeyRef), never as literal values", () => {
            const secrets = ofKind(objects, "Secret").map((s) => s.metadata.name);
            for (const e of c.env ?? []) {
              if (!SECRET_KEYS.includes(e.name)) continue;
              expect(e.value, `${svc.name} env ${e.name}`).to.equal(undefined);
              const ref = e.valueFrom?.secretKeyRef;
              expect(ref?.key).to.equal(e.name);
              expect(baseName(ref!.name, secrets.length ? ["tessera-secrets"] : [])).to.equal(
                "tessera-secrets",
              );
              if (secrets.length) expect(secrets).to.include(ref!.name);
            }
            // Prod reaches Redis through Sentinel: passwords instead of a URL.
            const redis =
              target === "overlays/prod" ? ["REDIS_PASSWORD", "REDIS_SENTINEL_PASSWORD"] : ["REDIS_URL"];
            const wanted = {
              "tessera-auth": [...redis, "ADMIN_TOKEN", "SERVICE_TOKEN"],
              "tessera-data": [...redis, "ADMIN_TOKEN", "SERVICE_TOKEN", "SECRETS_KEY", "MONGO_URL"],
              // The console's server serves files: it holds no secret at all.
              "tessera-console": [],
            }[svc.name]!;
            const got = (c.env ?? []).filter((e) => SECRET_KEYS.includes(e.name)).map((e) => e.name);
            expect(got.sort()).to.deep.equal(wanted.sort());
            expect(c.envFrom?.some((f) => f.secretRef)).to.not.equal(true);
          });

          if (svc.name !== "tessera-console")
            it("has Redis settings the service accepts (its start-up validation, secrets as placeholders)", () => {
              const secrets = Object.fromEntries(
                (c.env ?? []).filter((e) => SECRET_KEYS.includes(e.name)).map((e) => [e.name, "placeholder"]),
              );
              const env: Record<string, string> = {
                ...configEnv(objects, c),
                ...secrets,
                MONGO_URL: "mongodb://placeholder/",
              };
              if (secrets.REDIS_URL) env.REDIS_URL = "redis://placeholder:6379/";
              // A key of the shape the service takes: 32 bytes, base64.
              if (secrets.SECRETS_KEY) env.SECRETS_KEY = Buffer.alloc(32).toString("base64");
              const schema = svc.name === "tessera-auth" ? authConfigSchema : dataConfigSchema;
              const parsed = parseConfig(schema, env);
              if (target === "overlays/prod") {
                expect(parsed).to.include({ REDIS_MODE: "sentinel", REDIS_TLS: true });
                expect(Object.keys(secrets)).to.include.members([
                  "REDIS_PASSWORD",
                  "REDIS_SENTINEL_PASSWORD",
                ]);
              }
            });

          // The console's server reads no client address and builds no link: it has no TRUSTED_PROXIES.
          if (svc.name !== "tessera-console")
            it("believes X-Forwarded-* only from private ranges (TRUSTED_PROXIES: set, valid, no public range)", () => {
              const value = configEnv(objects, c).TRUSTED_PROXIES;
              expect(value, "TRUSTED_PROXIES").to.be.a("string");
              const parsed = trustedProxiesSetting.safeParse(value);
              expect(parsed.success, JSON.stringify(parsed.error?.issues)).to.equal(true);
              expect(parsed.data).to.not.be.empty;
              for (const entry of parsed.data ?? []) expect(isPrivateProxyEntry(entry), entry).to.equal(true);
            });

          it("uses its own ServiceAccount without a token", () => {
            const sa = byName(
              objects,
              "ServiceAccount",
              d.spec.template.spec.serviceAccountName ?? "default",
            );
            expect(sa.automountServiceAccountToken).to.equal(false);
          });

          it("drains gracefully: a preStop pause shorter than the termination grace period", () => {
            const pod = d.spec.template.spec as { terminationGracePeriodSeconds?: number };
            expect(pod.terminationGracePeriodSeconds).to.be.at.least(20);
            const lifecycle = (c as { lifecycle?: { preStop?: object } }).lifecycle;
            expect(lifecycle?.preStop).to.be.an("object");
          });

          if (target === "overlays/prod") {
            it("spreads pods over zones and nodes", () => {
              const tsc = d.spec.template.spec.topologySpreadConstraints ?? [];
              const keys = tsc.map((t) => t.topologyKey);
              expect(keys).to.include.members(["topology.kubernetes.io/zone", "kubernetes.io/hostname"]);
              for (const t of tsc) expect(selects(t.labelSelector, podLabels(d))).to.equal(true);
            });
          }
        });
      }

      it("ConfigMaps hold no secret settings", () => {
        for (const cm of ofKind(objects, "ConfigMap")) {
          for (const key of Object.keys(cm.data ?? {})) {
            expect(SECRET_KEYS, where(cm, key)).to.not.include(key);
          }
        }
      });
    });

    describe("secrets", () => {
      if (target === "overlays/dev") {
        it("generates tessera-secrets with obviously-dev values pointing at the in-cluster stores", () => {
          const [secret] = ofKind(objects, "Secret");
          expect(baseName(secret!.metadata.name, ["tessera-secrets"])).to.equal("tessera-secrets");
          const data = Object.fromEntries(
            Object.entries(secret!.data as Record<string, string>).map(([k, v]) => [
              k,
              Buffer.from(v, "base64").toString("utf8"),
            ]),
          );
          expect(Object.keys(data).sort()).to.deep.equal(
            ["ADMIN_TOKEN", "SERVICE_TOKEN", "SECRETS_KEY", "MONGO_URL", "REDIS_URL"].sort(),
          );
          expect(Buffer.from(data.SECRETS_KEY!, "base64").toString("utf8")).to.include(
            "never for production",
          );
          expect(data.ADMIN_TOKEN).to.match(/^dev-.*not-for-production$/);
          expect(data.SERVICE_TOKEN).to.match(/^dev-.*not-for-production$/);
          expect(data.MONGO_URL).to.match(/^mongodb:\/\/tessera-mongodb:27017\//);
          expect(data.REDIS_URL).to.match(/^redis:\/\/tessera-redis:6379/);
        });
      } else {
        it("contains no Secret object and no secret value", () => {
          expect(ofKind(objects, "Secret").map((s) => s.metadata.name)).to.deep.equal([]);
          for (const key of SECRET_KEYS) {
            expect(r.yaml, key).to.not.match(new RegExp(`${key}[=:]\\s*\\S`));
          }
        });
      }
    });

    describe("network policies", () => {
      let policies: NetworkPolicy[];
      let pods: Workload[];
      before(() => {
        policies = ofKind<NetworkPolicy>(objects, "NetworkPolicy");
        pods = workloads(objects);
      });
      const podsNamed = (name: string) => pods.filter((w) => podLabels(w)["app.kubernetes.io/name"] === name);
      const labelsOf = (name: string) => podLabels(byName(objects, "Deployment", name) as Workload);
      const appliesTo = (p: NetworkPolicy) =>
        pods
          .filter((w) => selects(p.spec.podSelector, podLabels(w)))
          .map((w) => podLabels(w)["app.kubernetes.io/name"]);
      /** Egress rules (with their policy) that let some pod reach `port`. */
      const egressTo = (port: number) =>
        policies.flatMap((p) =>
          (p.spec.egress ?? [])
            .filter((rule) => rulePorts(rule, pods).some((x) => x === undefined || x === port))
            .map((rule) => ({ p, rule })),
        );

      it("denies all ingress and egress by default", () => {
        const deny = policies.filter(
          (p) =>
            isEmptySelector(p.spec.podSelector) &&
            !p.spec.ingress?.length &&
            !p.spec.egress?.length &&
            p.spec.policyTypes?.includes("Ingress") &&
            p.spec.policyTypes?.includes("Egress"),
        );
        expect(deny).to.have.length(1);
      });

      it("allows DNS egress (53/UDP and 53/TCP) to kube-dns only", () => {
        const dns = policies.filter((p) => isEmptySelector(p.spec.podSelector) && p.spec.egress?.length);
        expect(dns).to.have.length(1);
        const [rule] = dns[0]!.spec.egress!;
        expect(rule!.ports).to.deep.equal([
          { protocol: "UDP", port: 53 },
          { protocol: "TCP", port: 53 },
        ]);
        expect(rule!.to?.[0]?.podSelector?.matchLabels).to.deep.equal({ "k8s-app": "kube-dns" });
        expect(dns[0]!.spec.ingress ?? []).to.deep.equal([]);
      });

      it("every egress and ingress rule names its ports and its peers", () => {
        for (const p of policies) {
          for (const rule of [...(p.spec.ingress ?? []), ...(p.spec.egress ?? [])]) {
            expect(rule.ports?.length, where(p, "rule without ports")).to.be.greaterThan(0);
            expect((rule.from ?? rule.to)?.length, where(p, "rule without peers")).to.be.greaterThan(0);
          }
        }
      });

      it("every Service has a NetworkPolicy selecting its pods that admits its port", () => {
        for (const svc of ofKind(objects, "Service")) {
          const backing = pods.filter((w) => selects({ matchLabels: svc.spec.selector }, podLabels(w)));
          expect(backing, where(svc, "has no pods")).to.not.have.length(0);
          for (const port of svc.spec.ports as { targetPort: number | string }[]) {
            const number = resolvePort(backing, port.targetPort);
            expect(number, where(svc, `targetPort ${port.targetPort}`)).to.be.a("number");
            const admitting = policies.filter(
              (p) =>
                !isEmptySelector(p.spec.podSelector) &&
                backing.every((w) => selects(p.spec.podSelector, podLabels(w))) &&
                p.spec.ingress?.some((rule) => rulePorts(rule, backing).includes(number)),
            );
            expect(
              admitting.map((p) => p.metadata.name),
              where(svc),
            ).to.not.have.length(0);
          }
        }
      });

      it("lets the ingress controller reach auth :8081, data :8082 and console :8083", () => {
        for (const svc of SERVICES) {
          const ok = policies.some(
            (p) =>
              selects(p.spec.podSelector, labelsOf(svc.name)) &&
              p.spec.ingress?.some(
                (rule) =>
                  rule.ports?.some((x) => x.port === svc.port) &&
                  rule.from?.some(
                    (f) =>
                      f.namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"] === "ingress-nginx" &&
                      f.podSelector?.matchLabels?.["app.kubernetes.io/name"] === "ingress-nginx",
                  ),
              ),
          );
          expect(ok, svc.name).to.equal(true);
        }
      });

      it("lets auth (and only auth, besides the ingress controller and monitoring) reach the data service port", () => {
        const data = byName<NetworkPolicy>(policies, "NetworkPolicy", "tessera-data");
        const inCluster = data.spec
          .ingress!.flatMap((rule) => rule.from ?? [])
          .filter((f) => !f.namespaceSelector);
        expect(inCluster).to.deep.equal([
          { podSelector: { matchLabels: { "app.kubernetes.io/name": "tessera-auth" } } },
        ]);
        const authEgress = egressTo(8082).filter(({ p }) => appliesTo(p).includes("tessera-auth"));
        expect(authEgress).to.have.length(1);
        expect(authEgress[0]!.rule.to).to.deep.equal([
          { podSelector: { matchLabels: { "app.kubernetes.io/name": "tessera-data" } } },
        ]);
      });

      it("only the data service may reach MongoDB (27017)", () => {
        const rules = egressTo(27017);
        // the base knows no store: the overlays add the store flows
        expect(rules.length > 0).to.equal(target !== "base");
        for (const { p } of rules) expect(appliesTo(p), where(p)).to.deep.equal(["tessera-data"]);
        for (const mongo of podsNamed("tessera-mongodb")) {
          const np = policies.filter(
            (p) => selects(p.spec.podSelector, podLabels(mongo)) && !isEmptySelector(p.spec.podSelector),
          );
          const from = np.flatMap((p) => p.spec.ingress ?? []).flatMap((rule) => rule.from ?? []);
          expect(from).to.deep.equal([
            { podSelector: { matchLabels: { "app.kubernetes.io/name": "tessera-data" } } },
          ]);
        }
      });

      it("only the auth and data services may reach Redis (6379)", () => {
        const rules = egressTo(6379);
        const who = new Set(rules.flatMap(({ p }) => appliesTo(p)));
        expect([...who].sort()).to.deep.equal(target === "base" ? [] : ["tessera-auth", "tessera-data"]);
        for (const redis of podsNamed("tessera-redis")) {
          const np = policies.filter(
            (p) => selects(p.spec.podSelector, podLabels(redis)) && !isEmptySelector(p.spec.podSelector),
          );
          const from = np.flatMap((p) => p.spec.ingress ?? []).flatMap((rule) => rule.from ?? []);
          expect(
            from.map((f) => f.podSelector?.matchLabels?.["app.kubernetes.io/name"]).sort(),
          ).to.deep.equal(["tessera-auth", "tessera-data"]);
        }
      });

      it("data may reach public addresses on 443/80 only, never private ranges; auth never reaches the internet", () => {
        const open = policies.flatMap((p) =>
          (p.spec.egress ?? [])
            .filter((rule) =>
              rule.to?.some((t) => t.ipBlock?.cidr === "0.0.0.0/0" || t.ipBlock?.cidr === "::/0"),
            )
            .map((rule) => ({ p, rule })),
        );
        expect(open).to.have.length(1);
        const { p, rule } = open[0]!;
        expect(appliesTo(p)).to.deep.equal(["tessera-data"]);
        expect(rule.ports?.map((x) => x.port).sort()).to.deep.equal([443, 80]);
        const v4 = rule.to!.find((t) => t.ipBlock?.cidr === "0.0.0.0/0")!.ipBlock!;
        const v6 = rule.to!.find((t) => t.ipBlock?.cidr === "::/0")!.ipBlock!;
        expect(v4.except).to.include.members(PRIVATE_V4);
        expect(v6.except).to.include.members(PRIVATE_V6);
      });

      it("lets the console's server reach nothing (DNS aside) and nobody but the ingress controller and monitoring reach it", () => {
        const console = byName<NetworkPolicy>(policies, "NetworkPolicy", "tessera-console");
        expect(console.spec.policyTypes).to.include.members(["Ingress", "Egress"]);
        expect(console.spec.egress ?? []).to.deep.equal([]);
        const egress = policies.filter(
          (p) => !isEmptySelector(p.spec.podSelector) && appliesTo(p).includes("tessera-console"),
        );
        expect(egress.flatMap((p) => p.spec.egress ?? [])).to.deep.equal([]);
        const from = console.spec.ingress!.flatMap((rule) => rule.from ?? []);
        expect(from.every((f) => f.namespaceSelector)).to.equal(true);
        expect(
          from.map((f) => f.namespaceSelector!.matchLabels!["kubernetes.io/metadata.name"]).sort(),
        ).to.deep.equal(["ingress-nginx", "monitoring"]);
        for (const other of ["tessera-auth", "tessera-data"]) {
          const np = byName<NetworkPolicy>(policies, "NetworkPolicy", other);
          const peers = [...(np.spec.ingress ?? []), ...(np.spec.egress ?? [])].flatMap((r) => [
            ...(r.from ?? []),
            ...(r.to ?? []),
          ]);
          expect(JSON.stringify(peers), other).to.not.include("tessera-console");
        }
      });

      if (target === "overlays/prod") {
        it("lets auth and data reach every configured sentinel (26379)", () => {
          for (const name of ["tessera-auth", "tessera-data"]) {
            const deployment = byName(objects, "Deployment", name) as Workload;
            const container = deployment.spec.template.spec.containers[0]!;
            const sentinels = (configEnv(objects, container).REDIS_SENTINELS ?? "").split(",");
            expect(sentinels.length, "three sentinels at least").to.be.at.least(3);
            const mine = egressTo(26379).filter(({ p }) => appliesTo(p).includes(name));
            for (const address of sentinels) {
              const [host = "", port] = address.split(":");
              expect(port, address).to.equal("26379");
              const reached = mine.some(({ rule }) =>
                (rule.to ?? []).some(
                  (peer) => peer.ipBlock && compileTrustedProxies([peer.ipBlock.cidr])(host, 0),
                ),
              );
              expect(reached, `${name} → ${address}`).to.equal(true);
            }
          }
        });

        it("reaches the external stores by ipBlock and runs no store in the cluster", () => {
          expect(podsNamed("tessera-mongodb")).to.deep.equal([]);
          expect(podsNamed("tessera-redis")).to.deep.equal([]);
          for (const { rule } of [...egressTo(27017), ...egressTo(6379)]) {
            for (const peer of rule.to ?? []) expect(peer.ipBlock?.cidr).to.match(/^[0-9a-f.:]+\/\d+$/);
          }
        });
      }
    });

    if (target === "overlays/dev") {
      describe("in-cluster stores (dev)", () => {
        it("runs a single-replica Redis with AOF (everysec), noeviction, on a PVC", () => {
          const redis = byName(objects, "StatefulSet", "tessera-redis") as Workload;
          expect(redis.spec.replicas).to.equal(1);
          const args = redis.spec.template.spec.containers[0]!.args!.join(" ");
          expect(args).to.match(/--appendonly yes/);
          expect(args).to.match(/--appendfsync everysec/);
          expect(args).to.match(/--maxmemory-policy noeviction/);
          expect(redis.spec.volumeClaimTemplates?.map((v) => v.metadata.name)).to.deep.equal(["data"]);
        });

        it("runs MongoDB as a single-node replica set on a PVC", () => {
          const mongo = byName(objects, "StatefulSet", "tessera-mongodb") as Workload;
          expect(mongo.spec.replicas).to.equal(1);
          const c = mongo.spec.template.spec.containers[0];
          expect(c!.command?.join(" ")).to.match(/--replSet rs0/);
          expect(JSON.stringify((c as { lifecycle?: object }).lifecycle)).to.match(/rs\.initiate/);
          expect(mongo.spec.volumeClaimTemplates?.map((v) => v.metadata.name)).to.deep.equal(["data"]);
        });
      });
    }
  });
}

describe("deploy/base is environment-neutral", () => {
  it("sets no namespace and defines no stores", () => {
    const { objects } = render("base");
    for (const o of objects) expect(o.metadata.namespace, where(o)).to.equal(undefined);
    expect(
      workloads(objects)
        .map((w) => w.metadata.name)
        .sort(),
    ).to.deep.equal(["tessera-auth", "tessera-console", "tessera-data"]);
  });
});
