/**
 * Helpers of the manifest tests: the pinned deploy tools (kustomize, kubeconform,
 * generated Kubernetes JSON schemas), rendering an overlay, schema validation,
 * and small typed views of the Kubernetes objects the policy checks read.
 *
 * Nothing here touches the network or a cluster. A missing tool is an error
 * with the command that installs it, never a skipped test.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

export const repoRoot = path.resolve(import.meta.dirname, "../..");
export const deployDir = path.join(repoRoot, "deploy");
export const toolsDir = path.join(repoRoot, ".tools");
export const INSTALL_HINT =
  "run `make tools` (or `bash deploy/tools/install.sh`) to install the deploy tools";

/** Pinned versions from deploy/tools/versions.env. */
export function toolVersions(): { kustomize: string; kubeconform: string; kubernetes: string } {
  const text = readFileSync(path.join(deployDir, "tools/versions.env"), "utf8");
  const get = (key: string): string => {
    const m = new RegExp(`^${key}=(\\S+)$`, "m").exec(text);
    if (!m) throw new Error(`deploy/tools/versions.env has no ${key}`);
    return m[1]!;
  };
  return {
    kustomize: get("KUSTOMIZE_VERSION"),
    kubeconform: get("KUBECONFORM_VERSION"),
    kubernetes: get("KUBERNETES_VERSION"),
  };
}

/** Path of a pinned tool binary; throws (with the install command) when missing or at another version. */
export function requireTool(name: "kustomize" | "kubeconform", binDir = path.join(toolsDir, "bin")): string {
  const want = toolVersions()[name];
  const bin = path.join(binDir, name);
  if (!existsSync(bin)) {
    throw new Error(`${name} ${want} is not installed (expected ${bin}): ${INSTALL_HINT}`);
  }
  const have = execFileSync(bin, [name === "kustomize" ? "version" : "-v"], { encoding: "utf8" }).trim();
  if (have !== want) {
    throw new Error(`${bin} is ${have}, the pinned version is ${want}: ${INSTALL_HINT}`);
  }
  return bin;
}

/** Folder holding <version>-standalone-strict/ schemas; throws when they were not generated. */
export function requireSchemas(root = path.join(toolsDir, "k8s-schemas")): string {
  const { kubernetes } = toolVersions();
  const dir = path.join(root, `${kubernetes}-standalone-strict`);
  if (!existsSync(path.join(dir, ".stamp")) || !existsSync(path.join(dir, "deployment-apps-v1.json"))) {
    throw new Error(
      `Kubernetes ${kubernetes} JSON schemas are not generated (expected ${dir}): ${INSTALL_HINT}`,
    );
  }
  return root;
}

// ---------------------------------------------------------------------------
// YAML: js-yaml comes with mocha; loaded through require so that no type
// package is needed for it.
const yaml = createRequire(import.meta.url)("js-yaml") as { loadAll(text: string): unknown[] };

export function parseYamlStream(text: string): K8sObject[] {
  return yaml.loadAll(text).filter((doc): doc is K8sObject => doc !== null && typeof doc === "object");
}

export type Target = "base" | "overlays/dev" | "overlays/prod";
export const TARGETS: Target[] = ["base", "overlays/dev", "overlays/prod"];

export interface Rendered {
  target: Target;
  yaml: string;
  objects: K8sObject[];
}

const renderCache = new Map<Target, Rendered>();

/** `kustomize build deploy/<target>` with the pinned kustomize (memoised per test process). */
export function render(target: Target): Rendered {
  const cached = renderCache.get(target);
  if (cached) return cached;
  const kustomize = requireTool("kustomize");
  const result = spawnSync(kustomize, ["build", path.join(deployDir, target)], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`kustomize build deploy/${target} failed:\n${result.stderr || result.error}`);
  }
  const rendered = { target, yaml: result.stdout, objects: parseYamlStream(result.stdout) };
  renderCache.set(target, rendered);
  return rendered;
}

export interface KubeconformResource {
  filename: string;
  kind: string;
  name: string;
  version: string;
  status: "statusValid" | "statusInvalid" | "statusError" | "statusSkipped" | "statusEmpty";
  msg?: string;
}

export interface KubeconformReport {
  resources: KubeconformResource[];
  summary: { valid: number; invalid: number; errors: number; skipped: number };
}

/**
 * Validates a YAML stream with kubeconform -strict against the generated
 * standalone-strict schemas of the pinned Kubernetes version (local files only:
 * no schema is ever downloaded).
 */
export function kubeconform(yamlText: string): KubeconformReport {
  const bin = requireTool("kubeconform");
  const schemas = requireSchemas();
  const version = toolVersions().kubernetes.replace(/^v/, "");
  const result = spawnSync(
    bin,
    [
      "-strict",
      "-summary",
      "-verbose",
      "-output",
      "json",
      "-kubernetes-version",
      version,
      "-schema-location",
      schemas,
      "-",
    ],
    { input: yamlText, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  if (result.error) throw result.error;
  try {
    return JSON.parse(result.stdout) as KubeconformReport;
  } catch {
    throw new Error(`kubeconform printed no JSON report (exit ${result.status}):\n${result.stderr}`);
  }
}

/** "Kind/name" list of the resources kubeconform did not find valid, with its messages. */
export function problems(report: KubeconformReport): string[] {
  return report.resources
    .filter((r) => r.status !== "statusValid")
    .map((r) => `${r.kind}/${r.name}: ${r.status} ${r.msg ?? ""}`);
}

// ---------------------------------------------------------------------------
// Typed views of the parts of Kubernetes objects the checks read.

export type Labels = Record<string, string>;

export interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: unknown[];
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Labels; annotations?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: kind-specific bodies are narrowed by the views below
  [field: string]: any;
}

export interface Probe {
  httpGet?: { path: string; port: number | string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
}

export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type: string };
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
  };
}

export interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: SecurityContext & { fsGroup?: number };
  automountServiceAccountToken?: boolean;
  serviceAccountName?: string;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  volumes?: { name: string; emptyDir?: object; persistentVolumeClaim?: object }[];
  topologySpreadConstraints?: {
    topologyKey: string;
    whenUnsatisfiable: string;
    maxSkew: number;
    labelSelector?: LabelSelector;
  }[];
}

export interface Workload extends K8sObject {
  spec: {
    replicas?: number;
    selector: LabelSelector;
    strategy?: {
      type?: string;
      rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string };
    };
    template: { metadata: { labels: Labels }; spec: PodSpec };
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
}

export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}

export interface NetworkPolicyRule {
  ports?: { protocol?: string; port?: number | string; endPort?: number }[];
  from?: NetworkPolicyPeer[];
  to?: NetworkPolicyPeer[];
}

export interface NetworkPolicy extends K8sObject {
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: NetworkPolicyRule[];
    egress?: NetworkPolicyRule[];
  };
}

export const WORKLOAD_KINDS = new Set(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"]);

export const ofKind = <T extends K8sObject = K8sObject>(objects: K8sObject[], kind: string): T[] =>
  objects.filter((o) => o.kind === kind) as T[];

export const workloads = (objects: K8sObject[]): Workload[] =>
  objects.filter((o) => WORKLOAD_KINDS.has(o.kind)) as Workload[];

export function byName<T extends K8sObject>(objects: T[], kind: string, name: string): T {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name} in the rendered manifests`);
  return found;
}

/** Does a label selector (matchLabels only; an empty selector selects everything) select `labels`? */
export function selects(selector: LabelSelector | undefined, labels: Labels): boolean {
  if (!selector) return false;
  if (selector.matchExpressions && selector.matchExpressions.length > 0) {
    throw new Error("matchExpressions are not supported by these checks: use matchLabels");
  }
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

export const isEmptySelector = (selector: LabelSelector | undefined): boolean =>
  !!selector && Object.keys(selector.matchLabels ?? {}).length === 0 && !selector.matchExpressions?.length;

/** All containers (init containers included) of a pod spec. */
export const containersOf = (pod: PodSpec): Container[] => [...(pod.initContainers ?? []), ...pod.containers];

/** A name that a generator suffixed with a content hash ("tessera-secrets-k6t5dt74cm") or the name itself. */
export const baseName = (name: string, generated: string[]): string =>
  generated.find((g) => name === g || new RegExp(`^${g}-[a-z0-9]{10}$`).test(name)) ?? name;

/** Keys that must only ever come from the Secret. */
export const SECRET_KEYS = [
  "ADMIN_TOKEN",
  "SERVICE_TOKEN",
  "SECRETS_KEY",
  "MONGO_URL",
  "REDIS_URL",
  "REDIS_PASSWORD",
  "REDIS_SENTINEL_PASSWORD",
];
