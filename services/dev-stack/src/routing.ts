/** The routing table of the one base URL (shared/routes.json), shared with the Kubernetes Ingress checks. */
import table from "../../../shared/routes.json" with { type: "json" };

export type ServiceName = "auth" | "data" | "console";

export interface Route {
  name: string;
  pattern: RegExp;
  service: ServiceName;
}

export const routes: Route[] = table.routes.map((r) => ({
  name: r.name,
  pattern: new RegExp(r.pattern),
  service: r.service as ServiceName,
}));

/** The service that serves `path`, or undefined (e.g. /internal/… is never routed). */
export function routeFor(path: string): ServiceName | undefined {
  return routes.find((r) => r.pattern.test(path))?.service;
}
