/**
 * The routing table of the one base URL (shared/routes.json): the one source of both the local
 * edge's nginx configuration (nginx.ts) and the Kubernetes Ingress rules (ingress.ts).
 */
import table from "../routes.json" with { type: "json" };

export type ServiceName = "auth" | "data" | "console";
export const SERVICE_NAMES: readonly ServiceName[] = ["auth", "data", "console"];

export interface Route {
  name: string;
  /** The table's pattern: an anchored regular expression over the URL path. */
  source: string;
  pattern: RegExp;
  service: ServiceName;
}

export const routes: readonly Route[] = table.routes.map((r) => {
  if (!SERVICE_NAMES.includes(r.service as ServiceName)) {
    throw new Error(`shared/routes.json: route ${r.name} names an unknown service '${r.service}'`);
  }
  if (!/^\^.*\$$/.test(r.pattern)) {
    throw new Error(`shared/routes.json: route ${r.name} must be anchored (^…$)`);
  }
  return {
    name: r.name,
    source: r.pattern,
    pattern: new RegExp(r.pattern),
    service: r.service as ServiceName,
  };
});

/** The Kubernetes Service (and the edge's upstream) of a service. */
export const serviceHost = (service: ServiceName): string => `tessera-${service}`;

/** The service that serves `path` by the table's first match, or undefined (e.g. /internal/… is never routed). */
export function routeFor(path: string): ServiceName | undefined {
  return routes.find((r) => r.pattern.test(path))?.service;
}
