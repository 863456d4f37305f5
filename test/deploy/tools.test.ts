/**
 * The deploy tool chain itself: pinned kustomize and kubeconform, generated
 * standalone-strict Kubernetes schemas, and proof that the validation is
 * strict (unknown fields, wrong types and unknown kinds are errors).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import {
  deployDir,
  INSTALL_HINT,
  kubeconform,
  problems,
  requireSchemas,
  requireTool,
  toolVersions,
} from "./support.ts";

describe("deploy tools", () => {
  it("pins exact versions in deploy/tools/versions.env", () => {
    const v = toolVersions();
    expect(v.kustomize).to.match(/^v5\.\d+\.\d+$/);
    expect(v.kubeconform).to.match(/^v\d+\.\d+\.\d+$/);
    expect(v.kubernetes).to.match(/^v1\.\d+\.\d+$/);
  });

  it("has kustomize installed at the pinned version in .tools/bin", () => {
    expect(requireTool("kustomize")).to.equal(path.join(deployDir, "../.tools/bin/kustomize"));
  });

  it("has kubeconform installed at the pinned version in .tools/bin", () => {
    expect(requireTool("kubeconform")).to.equal(path.join(deployDir, "../.tools/bin/kubeconform"));
  });

  it("has the Kubernetes JSON schemas generated for the pinned version", () => {
    const root = requireSchemas();
    const dir = path.join(root, `${toolVersions().kubernetes}-standalone-strict`);
    for (const file of [
      "deployment-apps-v1.json",
      "statefulset-apps-v1.json",
      "service-v1.json",
      "configmap-v1.json",
      "secret-v1.json",
      "namespace-v1.json",
      "serviceaccount-v1.json",
      "ingress-networking-v1.json",
      "networkpolicy-networking-v1.json",
      "horizontalpodautoscaler-autoscaling-v2.json",
      "poddisruptionbudget-policy-v1.json",
    ]) {
      expect(existsSync(path.join(dir, file)), file).to.equal(true);
    }
  });

  it("fails with the install command when a tool is missing (never skips)", () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), "tessera-no-tools-"));
    try {
      expect(() => requireTool("kustomize", empty)).to.throw(/kustomize v5\.\d+\.\d+ is not installed/);
      expect(() => requireTool("kubeconform", empty)).to.throw(INSTALL_HINT);
      expect(() => requireSchemas(empty)).to.throw(/schemas are not generated/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("install scripts are idempotent: a second run builds nothing (no Go on PATH needed)", function () {
    this.timeout(30_000);
    requireTool("kustomize");
    requireTool("kubeconform");
    requireSchemas();
    const result = spawnSync("bash", [path.join(deployDir, "tools/install.sh")], {
      encoding: "utf8",
      env: { PATH: "/usr/bin:/bin", HOME: os.tmpdir() },
    });
    expect(result.status, result.stderr).to.equal(0);
    expect(result.stderr.match(/already (installed|generated)/g)).to.have.length(3);
  });
});

describe("kubeconform strictness (self-test of the validator)", () => {
  const deployment = (containerExtra: string, resources = "") => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: probe
spec:
  selector:
    matchLabels: {app: probe}
  template:
    metadata:
      labels: {app: probe}
    spec:
      containers:
        - name: probe
          image: example/probe:1.0.0
          ${containerExtra}
          ${resources}
`;

  it("accepts a valid object, integer quantities and integer-or-string ports", () => {
    const report = kubeconform(
      deployment(
        "ports: [{name: http, containerPort: 80}]",
        "resources: {requests: {cpu: 1, memory: 64Mi}, limits: {cpu: 2.5, memory: 128Mi}}",
      ) +
        `---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: probe}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: probe}
  minReplicas: 2
  maxReplicas: 4
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: probe}
spec:
  maxUnavailable: 25%
  selector: {matchLabels: {app: probe}}
`,
    );
    expect(problems(report)).to.deep.equal([]);
    expect(report.summary.valid).to.equal(3);
  });

  it("rejects an unknown (misspelt) field", () => {
    const report = kubeconform(deployment("imagePullPolice: Always"));
    expect(report.summary.invalid).to.equal(1);
    expect(report.resources[0]!.msg).to.match(/imagePullPolice/);
  });

  it("rejects an unknown field in a NetworkPolicy and a wrong type in an Ingress", () => {
    const report = kubeconform(`
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: np}
spec:
  podSelector: {}
  policyType: [Ingress]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ing}
spec:
  rules:
    - http:
        paths:
          - path: /x
            pathType: ImplementationSpecific
            backend: {service: {name: s, port: {number: "80"}}}
`);
    expect(report.summary.invalid).to.equal(2);
  });

  it("rejects a kind it has no schema for instead of skipping it", () => {
    const report = kubeconform("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n");
    expect(report.summary.errors).to.equal(1);
    expect(report.summary.skipped).to.equal(0);
  });

  it("rejects a removed API version (autoscaling/v2beta2 HorizontalPodAutoscaler)", () => {
    const report = kubeconform(`
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata: {name: old}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: x}
  maxReplicas: 2
`);
    expect(report.summary.valid).to.equal(0);
  });
});
