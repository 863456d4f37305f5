/**
 * Local and deployed routing come from one table, shared/routes.json: deploy/base/ingress.yaml
 * is what shared/routing/ingress.ts renders from it, and the local edge's nginx configuration
 * (shared/routing/nginx.ts) has one location per Ingress path of every overlay, in the order
 * ingress-nginx gives them, matched as ingress-nginx matches them, to the same service. Also
 * simulates how ingress-nginx evaluates the paths (each in `location ~* "^<path>"`, longest
 * path first) and checks that it routes sample requests exactly as the table does, and never
 * routes /internal. (test/integration/edge.test.ts sends the samples through the real nginx.)
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { ingressManifest, ingressNginxOrder } from "../../shared/routing/ingress.ts";
import { nginxConfig } from "../../shared/routing/nginx.ts";
import { byName, type K8sObject, ofKind, render, repoRoot, TARGETS } from "./support.ts";

interface TableRoute {
  name: string;
  pattern: string;
  service: "auth" | "data" | "console";
}

const table = JSON.parse(readFileSync(path.join(repoRoot, "shared/routes.json"), "utf8")) as {
  routes: TableRoute[];
};

interface IngressPath {
  path: string;
  pathType: string;
  backend: { service: { name: string; port: { name?: string; number?: number } } };
}

/** First table route whose pattern matches (the table's own semantics). */
const tableRoute = (p: string) => table.routes.find((r) => new RegExp(r.pattern).test(p));

/**
 * ingress-nginx's location order within a server: stable sort by path (descending), then stable
 * sort by path length (longest first). With use-regex every path becomes `location ~* "^<path>"`
 * (case-insensitive) and nginx takes the first regex location that matches.
 */
const nginxOrder = (paths: IngressPath[]) => ingressNginxOrder(paths);

/** The literal text a pattern starts with (up to its first regex metacharacter). */
const literalPrefix = (p: string) => /^[^[\](){}.*+?|^$]*/.exec(p.replace(/^\^/, ""))![0];
const nginxRoute = (paths: IngressPath[], p: string) =>
  nginxOrder(paths).find((x) => new RegExp(`^${x.path}`, "i").test(p));

const SAMPLES = [
  "/rest/acme/demo/v1/@authentication",
  "/rest/acme/demo/v1/@authentication/",
  "/rest/acme/demo/v1/Customers",
  "/rest/acme/demo/v1/Customers/@authentication",
  "/rest/acme/demo/v1/customer/Alpha%20Co",
  "/rest/acme/demo/v1",
  "/rest",
  "/rest/",
  "/admin/v1/accounts/acme",
  "/admin/v1/accounts/acme/projects/demo",
  "/admin/v1/accounts/acme/projects/demo/apikeys",
  "/admin/v1/accounts/acme/projects/demo/apikeys/k-123",
  "/admin/v1/accounts/acme/projects/demo/users/alice",
  "/admin/v1/accounts/acme/@authentication",
  "/admin/v1/accounts/acme/@authentication/",
  "/admin/v1/accounts/acme/admins/ann",
  "/admin/v1/accounts/acme/audit",
  "/admin/v1/accounts/acme/projects/demo/@authentication",
  "/admin/v1/audit",
  "/admin/v1",
  "/admin/v2/accounts",
  "/internal/v1/projects/acme/demo/authentication",
  "/internal/v1/auth/verdict",
  "/restx/acme",
  "/console",
  "/console/",
  "/console/assets/index-Ab12.js",
  "/consolex",
  "/rest/acme/demo/v1/console",
  "/healthz",
  "/readyz",
  "/metrics",
  "/",
];

/** The route locations of an nginx configuration, in order: [pattern, upstream]. */
function nginxLocations(config: string): { path: string; backend: string }[] {
  return [...config.matchAll(/location ~\* "\^([^"]+)" \{\s*proxy_pass http:\/\/([\w-]+);/g)].map((m) => ({
    path: m[1]!,
    backend: m[2]!,
  }));
}

describe("shared/routes.json", () => {
  it("is what deploy/base/ingress.yaml was written from (`make ingress`)", () => {
    expect(readFileSync(path.join(repoRoot, "deploy/base/ingress.yaml"), "utf8")).to.equal(ingressManifest());
  });

  it("is a non-empty table of anchored patterns for the auth and data services", () => {
    expect(table.routes.length).to.be.greaterThan(0);
    for (const r of table.routes) {
      expect(r.pattern, r.name).to.match(/^\^.*\$$/);
      expect(["auth", "data", "console"], r.name).to.include(r.service);
      expect(() => new RegExp(r.pattern)).to.not.throw();
    }
  });
});

for (const target of TARGETS) {
  describe(`deploy/${target} Ingress`, () => {
    let ingress: K8sObject;
    let paths: IngressPath[];
    let services: K8sObject[];
    before(function () {
      this.timeout(60_000);
      const { objects } = render(target);
      const all = ofKind(objects, "Ingress");
      expect(all, "exactly one Ingress").to.have.length(1);
      ingress = all[0]!;
      expect(ingress.spec.rules, "one rule").to.have.length(1);
      paths = ingress.spec.rules[0].http.paths;
      services = ofKind(objects, "Service");
    });

    it("is an ingress-nginx Ingress with regex paths", () => {
      expect(ingress.spec.ingressClassName).to.equal("nginx");
      expect(ingress.metadata.annotations?.["nginx.ingress.kubernetes.io/use-regex"]).to.equal("true");
      for (const p of paths) expect(p.pathType, p.path).to.equal("ImplementationSpecific");
    });

    it("has the routing table's routes: same order, same patterns, same backends", () => {
      const actual = paths.map((p) => ({ path: p.path, backend: p.backend.service.name }));
      const expected = table.routes.map((r) => ({
        path: r.pattern.replace(/^\^/, ""),
        backend: `tessera-${r.service}`,
      }));
      expect(actual).to.deep.equal(expected);
    });

    it("points every backend at an existing Service port", () => {
      for (const p of paths) {
        const svc = byName(services, "Service", p.backend.service.name);
        const port = p.backend.service.port;
        const found = (svc.spec.ports as { name?: string; port: number }[]).some(
          (sp) =>
            (port.name !== undefined && sp.name === port.name) ||
            (port.number !== undefined && sp.port === port.number),
        );
        expect(found, `${p.path} -> ${svc.metadata.name}`).to.equal(true);
      }
    });

    it("keeps the table's first-match semantics under ingress-nginx's location ordering", () => {
      // Wherever nginx tries a later route before an earlier one, the two must
      // not be able to match the same path: their literal prefixes diverge.
      const order = nginxOrder(paths).map((p) => p.path);
      paths.forEach((earlier, i) => {
        paths.slice(i + 1).forEach((later) => {
          if (order.indexOf(later.path) > order.indexOf(earlier.path)) return;
          const [a, b] = [literalPrefix(earlier.path), literalPrefix(later.path)];
          const disjoint = !a.startsWith(b) && !b.startsWith(a);
          expect(disjoint, `nginx tries ${later.path} before ${earlier.path}, and both can match`).to.equal(
            true,
          );
        });
      });
    });

    it("is routed by the local edge's nginx alike: the same locations, in ingress-nginx's order, to the same services", () => {
      const config = nginxConfig({
        listen: "127.0.0.1:8080",
        upstreams: { auth: ["127.0.0.1:1"], data: ["127.0.0.1:2"], console: ["127.0.0.1:3"] },
        maxBodyBytes: 1024 * 1024,
        runDir: "/run/edge",
      });
      const expected = nginxOrder(paths).map((p) => ({ path: p.path, backend: p.backend.service.name }));
      expect(nginxLocations(config)).to.deep.equal(expected);
      expect(expected).to.have.length(table.routes.length);
    });

    it("routes sample requests exactly as the routing table does, and never /internal", () => {
      for (const sample of SAMPLES) {
        const want = tableRoute(sample);
        const got = nginxRoute(paths, sample);
        expect(got?.backend.service.name, sample).to.equal(want ? `tessera-${want.service}` : undefined);
        if (sample.startsWith("/internal")) expect(got, sample).to.equal(undefined);
      }
    });
  });
}
