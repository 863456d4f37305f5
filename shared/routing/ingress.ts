/**
 * The Kubernetes Ingress of the one base URL, rendered from the routing table (routes.ts):
 * `deploy/base/ingress.yaml` is this module's `ingressManifest()` (written by `make ingress`,
 * compared by test/deploy/ingress-routes.test.ts), and the local edge (nginx.ts) orders and
 * matches its locations exactly as ingress-nginx does with these paths.
 */
import { routes, type ServiceName, serviceHost } from "./routes.ts";

/** Settings the Ingress's controller and the local edge share. */
export const EDGE_TIMEOUT_SECONDS = 60;
/**
 * ingress-nginx's own body limit: above every service's (the data service's MAX_BODY_BYTES, 4 MiB
 * by default), so that the services answer 413 with Tessera's error body; the local edge refuses
 * at the data service's limit itself (nginx.ts).
 */
export const INGRESS_BODY_LIMIT = "8m";
/**
 * The longest request line the edge reads: Node's own limit for a request's head (16 KiB), so
 * that a request a service would read (e.g. a filter of 4,096 characters, percent-encoded) reaches
 * it and is answered there. nginx's and ingress-nginx's default (8 KiB) would answer such a
 * request 414 before any service saw it. ingress-nginx takes it from its ConfigMap
 * (`large-client-header-buffers`), not from an annotation: see the header of ingress.yaml.
 */
export const EDGE_REQUEST_LINE_BYTES = 16 * 1024;
export const EDGE_HEADER_BUFFERS = `4 ${EDGE_REQUEST_LINE_BYTES / 1024}k`;

export interface IngressPath {
  /** The table's pattern without its leading `^`: ingress-nginx writes `location ~* "^<path>"`. */
  path: string;
  pathType: "ImplementationSpecific";
  backend: { service: { name: string; port: { name: "http" } } };
  /** Which route of the table it is. */
  route: string;
  service: ServiceName;
}

/** One Ingress path per row of the table, in the table's order. */
export function ingressPaths(): IngressPath[] {
  return routes.map((r) => ({
    path: r.source.replace(/^\^/, ""),
    pathType: "ImplementationSpecific",
    backend: { service: { name: serviceHost(r.service), port: { name: "http" } } },
    route: r.name,
    service: r.service,
  }));
}

/**
 * The order in which ingress-nginx writes regex locations into a server, and so tries them: a
 * stable sort by path (descending), then by path length (longest first). nginx takes the first
 * regex location that matches.
 */
export function ingressNginxOrder<T extends { path: string }>(paths: readonly T[]): T[] {
  return [...paths]
    .sort((a, b) => (a.path > b.path ? -1 : a.path < b.path ? 1 : 0))
    .sort((a, b) => b.path.length - a.path.length);
}

const HEADER = `# GENERATED from shared/routes.json by \`make ingress\` (shared/routing/ingress.ts): do not edit.
#
# The one base URL. One regex path per row of the routing table, in the table's order, each
# pattern without its leading "^" (ingress-nginx puts every regex path in
# \`location ~* "^<path>"\`), to the same service. The local edge of \`make run\` and the tests
# (nginx rendered by shared/routing/nginx.ts) is written from the same table, in the order
# ingress-nginx gives these paths (longest first), so both route alike; test/deploy checks it.
#
# /internal/** matches no path here and is therefore never routed.
#
# The controller's ConfigMap must set large-client-header-buffers: "${EDGE_HEADER_BUFFERS}" (as the local
# edge does): with ingress-nginx's default ("4 8k") a request line over 8 KiB, e.g. a long
# filter, is refused by the controller before the data service can answer it.
`;

/** The text of deploy/base/ingress.yaml. */
export function ingressManifest(): string {
  const paths = ingressPaths()
    .map(
      (p) => `          # route "${p.route}" -> ${p.service}
          - path: ${p.path}
            pathType: ${p.pathType}
            backend:
              service:
                name: ${p.backend.service.name}
                port:
                  name: ${p.backend.service.port.name}
`,
    )
    .join("");
  return `${HEADER}apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: tessera
  annotations:
    nginx.ingress.kubernetes.io/use-regex: "true"
    nginx.ingress.kubernetes.io/proxy-body-size: ${INGRESS_BODY_LIMIT}
    nginx.ingress.kubernetes.io/proxy-read-timeout: "${EDGE_TIMEOUT_SECONDS}"
    nginx.ingress.kubernetes.io/proxy-send-timeout: "${EDGE_TIMEOUT_SECONDS}"
spec:
  ingressClassName: nginx
  rules:
    - http:
        paths:
${paths}`;
}
