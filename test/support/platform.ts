/**
 * The whole platform for integration tests: data service and auth service, each a real HTTP
 * server on a loopback port, behind the edge of `make run` (nginx rendered from the routing
 * table, services/dev-stack/src/edge.ts), against the real stores
 * (test/support/stores.ts). Each platform has its own database prefix and Redis
 * key prefix, so tests never see each other's data or a running `make run`.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http, { type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Writable } from "node:stream";
import type { MongoClient } from "mongodb";
import { createAuthService } from "../../services/auth/src/service.ts";
import { createConsoleService } from "../../services/console/src/service.ts";
import { createDataService, type DataService } from "../../services/data/src/service.ts";
import { startEdge } from "../../services/dev-stack/src/edge.ts";
import { freePort } from "../../services/dev-stack/src/stores.ts";
import {
  authConfigSchema,
  consoleConfigSchema,
  type DataConfig,
  dataConfigSchema,
  parseConfig,
} from "../../shared/config/config.ts";
import { SERVICE_KEEP_ALIVE_MS } from "../../shared/http/serve.ts";
import { createLogger } from "../../shared/logger.ts";
import { isolationPrefix, testStores } from "./stores.ts";

/** Drops every database whose name starts with `prefix` (a platform's metadata and its tenants'). */
export async function dropDatabases(mongo: MongoClient, prefix: string): Promise<void> {
  const admin = mongo.db("admin");
  const { databases } = await admin.command({ listDatabases: 1, nameOnly: true });
  for (const { name } of databases as { name: string }[]) {
    if (name.startsWith(prefix)) await mongo.db(name).dropDatabase();
  }
}

export interface PlatformOptions {
  /** Where both services write their JSON logs (default: nowhere). */
  logSink?: Writable;
  /** Also serve the built console at /console/, as production does (needs `make console` first). */
  console?: boolean;
  /** Another MongoDB-wire store than the tests' own (test/support/stores.ts), e.g. a stock FerretDB build. */
  mongoUrl?: string;
}

export interface Platform {
  baseUrl: string;
  adminToken: string;
  prefix: string;
  dataUrl: string;
  authUrl: string;
  /** The data service's configuration, to start more processes of the same deployment. */
  dataConfig: DataConfig;
  /** The data service itself, for tests that look at its stores directly. */
  data: DataService;
  close(): Promise<void>;
}

function listen(server: Server): Promise<string> {
  // As shared/http/serve.ts: the edge lets an idle connection go before the service would.
  server.keepAliveTimeout = SERVICE_KEEP_ALIVE_MS;
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function startPlatform(
  env: Record<string, string> = {},
  options: PlatformOptions = {},
): Promise<Platform> {
  const stores = await testStores();
  const { redisEnv } = stores;
  const mongoUrl = options.mongoUrl ?? stores.mongoUrl;
  const prefix = isolationPrefix();
  const adminToken = `admin-${prefix}`;
  const common = {
    ...redisEnv,
    REDIS_PREFIX: `tessera-test:${prefix}`,
    ADMIN_TOKEN: adminToken,
    SERVICE_TOKEN: `service-${prefix}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? (options.logSink ? "info" : "silent"),
    // Fast password hashing in tests; the benchmark measures the production setting.
    ARGON2_MEMORY_KIB: "1024",
    // The edge reaches the services from 127.0.0.1 (test clients use other loopback addresses).
    TRUSTED_PROXIES: "127.0.0.1",
    // Stored secrets sealed, as in production.
    SECRETS_KEY: randomBytes(32).toString("base64"),
    ...env,
  };
  const dataConfig = parseConfig(dataConfigSchema, {
    ...common,
    MONGO_URL: mongoUrl,
    META_DB: `${prefix}meta`,
    TENANT_DB_PREFIX: prefix,
  });
  const data = await createDataService(
    dataConfig,
    createLogger("data", dataConfig.LOG_LEVEL, options.logSink),
  );
  const dataServer = http.createServer(data.app.callback());
  const dataUrl = await listen(dataServer);

  const authConfig = parseConfig(authConfigSchema, { ...common, DATA_SERVICE_URL: dataUrl });
  const auth = await createAuthService(
    authConfig,
    createLogger("auth", authConfig.LOG_LEVEL, options.logSink),
  );
  const authServer = http.createServer(auth.app.callback());
  const authUrl = await listen(authServer);

  let consoleServer: Server | undefined;
  let consoleUrl: string | undefined;
  if (options.console) {
    const consoleConfig = parseConfig(consoleConfigSchema, { LOG_LEVEL: common.LOG_LEVEL });
    const consoleService = await createConsoleService(
      consoleConfig,
      createLogger("console", consoleConfig.LOG_LEVEL, options.logSink),
    );
    consoleServer = http.createServer(consoleService.app.callback());
    consoleUrl = await listen(consoleServer);
  }

  const hostPort = (url: string) => new URL(url).host;
  const edgeDir = mkdtempSync(path.join(os.tmpdir(), "tessera-edge-"));
  const edge = await startEdge(edgeDir, {
    port: await freePort(),
    upstreams: {
      auth: [hostPort(authUrl)],
      data: [hostPort(dataUrl)],
      ...(consoleUrl ? { console: [hostPort(consoleUrl)] } : {}),
    },
    maxBodyBytes: dataConfig.MAX_BODY_BYTES,
  });
  const baseUrl = edge.url;

  return {
    baseUrl,
    adminToken,
    prefix,
    dataUrl,
    authUrl,
    dataConfig,
    data,
    async close() {
      await edge.stop();
      rmSync(edgeDir, { recursive: true, force: true });
      await Promise.all([authServer, dataServer, consoleServer].flatMap((s) => (s ? [closeServer(s)] : [])));
      await auth.close();
      await dropDatabases(data.mongo, prefix);
      await data.close();
    },
  };
}
