/**
 * Starts a Koa app and stops it gracefully on SIGTERM/SIGINT: readiness turns
 * false, the server stops accepting, in-flight requests drain (bounded by the
 * grace period), then store connections close.
 */
import http from "node:http";
import type Koa from "koa";
import { createLogger, type Logger } from "../logger.ts";

/** How long a service keeps an idle connection open: the edge lets its own go sooner (shared/routing/nginx.ts). */
export const SERVICE_KEEP_ALIVE_MS = 65_000;

export interface Lifecycle {
  shuttingDown: boolean;
}

export async function serve(options: {
  app: Koa;
  host: string;
  port: number;
  graceMs: number;
  logger: Logger;
  lifecycle: Lifecycle;
  close: () => Promise<void>;
}): Promise<http.Server> {
  const { app, host, port, graceMs, logger, lifecycle, close } = options;
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = SERVICE_KEEP_ALIVE_MS;
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address();
  logger.info({ port: typeof address === "object" && address ? address.port : port, host }, "listening");

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    lifecycle.shuttingDown = true;
    logger.info({ signal }, "shutting down");
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    clearTimeout(force);
    await close();
    logger.info("stopped");
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
  return server;
}

interface ServiceConfig {
  LOG_LEVEL: string;
  HOST: string;
  PORT: number;
  SHUTDOWN_GRACE_MS: number;
}

/** A service's whole start-up: parse and validate config once, build, listen, stop gracefully. */
export async function runService<C extends ServiceConfig>(
  name: string,
  parse: (env: NodeJS.ProcessEnv) => C,
  create: (
    config: C,
    logger: Logger,
  ) => Promise<{ app: Koa; lifecycle: Lifecycle; close: () => Promise<void> }>,
): Promise<void> {
  const config = parse(process.env);
  const logger = createLogger(name, config.LOG_LEVEL);
  const service = await create(config, logger);
  await serve({
    app: service.app,
    host: config.HOST,
    port: config.PORT,
    graceMs: config.SHUTDOWN_GRACE_MS,
    logger,
    lifecycle: service.lifecycle,
    close: service.close,
  });
}
