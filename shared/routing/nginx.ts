/**
 * The edge of the one base URL as an nginx configuration, rendered from the routing table
 * (routes.ts) through the Ingress paths (ingress.ts): the same regex locations, tried in the
 * same order and as case-insensitively as ingress-nginx tries the Ingress's paths, so that the
 * local edge (`make run`, the integration tests, the podman deploy of `make test-deploy`)
 * routes exactly as a cluster does.
 *
 * What the edge does besides routing:
 * - `X-Forwarded-For/-Host/-Proto` are what the edge saw (the client's address, the `Host` it
 *   sent, the scheme), never what the client wrote; `Forwarded` is dropped; `X-Request-ID` is
 *   the client's or one the edge makes.
 * - Request lines up to 16 KiB (as Node reads), longer ones answered 414 with Tessera's error
 *   body (4141).
 * - Bodies over `maxBodyBytes` are answered 413 with Tessera's error body (4131) once the edge
 *   has read them (nginx reads and drops the rest), so a client still sending reads the answer.
 * - Kept-alive connections to every replica, let go before a service would close them.
 * - No response buffering (ingress-nginx's default too): server-sent events pass as written.
 * - Several replicas per service, taken in turn; a replica that refuses connections is skipped
 *   (a request is sent to another replica only if nothing of it was sent yet).
 * - `GET /readyz` answers 200 when a replica of every service is ready.
 * - Service listeners: a port that stands in for a Kubernetes Service (every path, headers as
 *   sent), e.g. the one the auth service reaches the data service's replicas through.
 */
import { errors } from "../errors.ts";
import { SERVICE_KEEP_ALIVE_MS } from "../http/serve.ts";
import {
  EDGE_HEADER_BUFFERS,
  EDGE_REQUEST_LINE_BYTES,
  EDGE_TIMEOUT_SECONDS,
  ingressNginxOrder,
  ingressPaths,
} from "./ingress.ts";
import { type ServiceName, serviceHost } from "./routes.ts";

export interface EdgeOptions {
  /** Where clients connect (`host:port`). */
  listen: string;
  /** `host:port` of every replica of each service; a service without any is not routed (404). */
  upstreams: Partial<Record<ServiceName, readonly string[]>>;
  /** Request bodies over this many bytes are answered 413 here and never reach a service. */
  maxBodyBytes: number;
  /** Folder of the pid file, the error log and the temporary files of request bodies. */
  runDir: string;
  /** nginx worker processes (default 1). */
  workers?: number | "auto";
  /** Ports that stand in for a Kubernetes Service of one service (`host:port`). */
  serviceListeners?: readonly { listen: string; service: ServiceName }[];
  /** The user the workers run as, when nginx is started by root. */
  user?: string;
  /** Log every request to `<runDir>/access.log` (default: no access log). */
  accessLog?: boolean;
}

/** How long the edge keeps an unused connection to a service: well under the services' own keep-alive timeout. */
export const UPSTREAM_KEEPALIVE_SECONDS = Math.floor(SERVICE_KEEP_ALIVE_MS / 1000) - 5;

/** A JSON body for nginx's `return`, with nginx's own request id in it. */
function errorBody(error: { body(requestId?: string): object }): string {
  const text = JSON.stringify(error.body("__REQUEST_ID__")).replace("__REQUEST_ID__", "$request_id");
  if (/['\\]|\$(?!request_id)/.test(text))
    throw new Error(`cannot put this text into nginx's return: ${text}`);
  return `'${text}'`;
}

const present = (options: EdgeOptions): ServiceName[] =>
  (Object.keys(options.upstreams) as ServiceName[]).filter((s) => (options.upstreams[s]?.length ?? 0) > 0);

/**
 * A service's replicas: one that fails a request (refused, reset, timed out) is left out for 2 s.
 * Readiness is asked of the same replicas through an upstream of its own that keeps no such
 * record, so that a replica still starting does not take the others' turn away.
 */
function upstreamBlock(service: ServiceName, servers: readonly string[]): string {
  return `  upstream ${serviceHost(service)} {
${servers.map((s) => `    server ${s} max_fails=1 fail_timeout=2s;`).join("\n")}
    keepalive 64;
    keepalive_timeout ${UPSTREAM_KEEPALIVE_SECONDS}s;
    keepalive_requests 10000;
  }
  upstream ${readinessUpstream(service)} {
${servers.map((s) => `    server ${s} max_fails=0;`).join("\n")}
  }
`;
}

const readinessUpstream = (service: ServiceName) => `${serviceHost(service)}-readiness`;

/** Error pages of a location: a location with error_page directives of its own inherits none. */
function errorPages(service?: ServiceName): string {
  return [
    "      error_page 400 /_edge/bad-request;",
    "      error_page 413 @edge-too-large;",
    ...(service ? [`      error_page 502 504 =503 @edge-unavailable-${service};`] : []),
  ].join("\n");
}

/**
 * `GET /readyz`: each service's readiness is asked of its replicas (any ready replica will do)
 * in a subrequest (`auth_request`), one service per location, the locations chained by
 * `try_files` to a file that never exists; the last service's answer is the answer.
 */
function readiness(services: ServiceName[]): string {
  const step = (i: number) => (i === 0 ? "= /readyz" : `@edge-ready-${services[i]}`);
  const chain = services.map((service, i) => {
    const last = i === services.length - 1;
    const body = last
      ? `      proxy_pass http://${readinessUpstream(service)};`
      : `      auth_request /_edge/ready/${service};
      try_files /.edge-never-a-file @edge-ready-${services[i + 1]};`;
    return `    location ${step(i)} {
${body}
      proxy_next_upstream error timeout http_502 http_503;
      error_page 500 502 503 504 =503 @edge-not-ready;
    }
`;
  });
  const checks = services.slice(0, -1).map(
    (service) => `    location = /_edge/ready/${service} {
      internal;
      proxy_pass http://${readinessUpstream(service)}/readyz;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_next_upstream error timeout http_502 http_503;
    }
`,
  );
  return [...chain, ...checks].join("");
}

export function nginxConfig(options: EdgeOptions): string {
  const services = present(options);
  if (!services.includes("auth") || !services.includes("data")) {
    throw new Error("the edge needs at least one replica of the auth and of the data service");
  }
  const run = options.runDir;
  const paths = ingressNginxOrder(ingressPaths()).filter((p) => services.includes(p.service));
  const routeLocations = paths
    .map(
      (p) => `    # route "${p.route}" -> ${p.service}
    location ~* "^${p.path}" {
      proxy_pass http://${p.backend.service.name};
${errorPages(p.service)}
    }
`,
    )
    .join("");
  // Refused by every replica before a byte was sent: nothing was done. Sent, and then no answer
  // (the replica died with it): the service may or may not have carried it out.
  const unavailable = services
    .map(
      (s) => `    location @edge-unavailable-${s} {
      if ($edge_nothing_sent) {
        return 503 ${errorBody(errors.unavailable(`The ${s} service`))};
      }
      return 503 ${errorBody(errors.unanswered(`The ${s} service`))};
    }
`,
    )
    .join("");
  const serviceServers = (options.serviceListeners ?? [])
    .map(
      ({
        listen,
        service,
      }) => `  # A stand-in for the Kubernetes Service ${serviceHost(service)}: every path, headers as sent.
  server {
    listen ${listen};
    proxy_set_header Host $http_host;
    proxy_set_header Connection "";
    location / {
      proxy_pass http://${serviceHost(service)};
      error_page 502 504 =503 @edge-unavailable-${service};
    }
${unavailable}  }
`,
    )
    .join("");
  return `# Rendered by shared/routing/nginx.ts from shared/routes.json: do not edit.
${options.user ? `user ${options.user};\n` : ""}worker_processes ${options.workers ?? 1};
pid ${run}/nginx.pid;
lock_file ${run}/nginx.lock;
error_log ${run}/error.log warn;
events {
  worker_connections 4096;
}
http {
  ${options.accessLog ? `access_log ${run}/access.log;` : "access_log off;"}
  server_tokens off;
  default_type application/json;
  client_body_temp_path ${run}/body;
  proxy_temp_path ${run}/proxy;
  fastcgi_temp_path ${run}/fastcgi;
  uwsgi_temp_path ${run}/uwsgi;
  scgi_temp_path ${run}/scgi;
  keepalive_timeout 75s;
  keepalive_requests 1000;
  client_max_body_size ${options.maxBodyBytes};
  client_body_buffer_size 64k;
  large_client_header_buffers ${EDGE_HEADER_BUFFERS};
  proxy_http_version 1.1;
  proxy_buffering off;
  proxy_request_buffering on;
  proxy_connect_timeout 5s;
  proxy_read_timeout ${EDGE_TIMEOUT_SECONDS}s;
  proxy_send_timeout ${EDGE_TIMEOUT_SECONDS}s;
  proxy_next_upstream error timeout;
  map $http_x_request_id $edge_request_id {
    "" $request_id;
    default $http_x_request_id;
  }
  map $upstream_bytes_sent $edge_nothing_sent {
    "~^[0, ]*$" 1;
    default 0;
  }
  map $http_host $edge_host {
    "" $host;
    default $http_host;
  }

${services.map((s) => upstreamBlock(s, options.upstreams[s] ?? [])).join("\n")}
  server {
    listen ${options.listen};
    proxy_set_header Host $edge_host;
    proxy_set_header X-Forwarded-For $remote_addr;
    proxy_set_header X-Forwarded-Host $edge_host;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_set_header Forwarded "";
    proxy_set_header X-Request-ID $edge_request_id;
    proxy_set_header Connection "";
    # A request nginx cannot read (e.g. a malformed %-escape, a path above the root) is refused here
    # (by a path: such a request has none that nginx could carry to a named location).
    error_page 400 /_edge/bad-request;
    error_page 413 @edge-too-large;
    error_page 414 /_edge/request-line-too-long;

${readiness(services)}${routeLocations}    location / {
      return 404 ${errorBody(errors.notFound("No resource at this path"))};
    }
    location = /_edge/bad-request {
      internal;
      return 400 ${errorBody(errors.malformed("The request line or its headers could not be read"))};
    }
    location = /_edge/request-line-too-long {
      internal;
      return 414 ${errorBody(errors.requestLineTooLong(EDGE_REQUEST_LINE_BYTES))};
    }
    location @edge-too-large {
      return 413 ${errorBody(errors.tooLarge(options.maxBodyBytes))};
    }
    location @edge-not-ready {
      return 503 '{"status":"not ready"}';
    }
${unavailable}  }
${serviceServers}}
`;
}
