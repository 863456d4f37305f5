/**
 * A second data service of a test platform (same databases, same Redis prefix)
 * whose MongoDB connection goes through a MongoProxy, so a test can cut, hold
 * and count its store traffic while the platform's own data service keeps a
 * direct connection.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { createDataService, type DataService } from "../../../services/data/src/service.ts";
import type { DataConfig } from "../../../shared/config/config.ts";
import { createLogger } from "../../../shared/logger.ts";
import type { Platform } from "../../support/platform.ts";
import { testStores } from "../../support/stores.ts";
import { type DropPlan, MongoProxy } from "./mongo-proxy.ts";

export interface ProxiedDataService {
  proxy: MongoProxy;
  data: DataService;
  baseUrl: string;
  close(): Promise<void>;
}

export async function startProxiedDataService(
  platform: Platform,
  overrides: Partial<DataConfig> = {},
): Promise<ProxiedDataService> {
  const { mongoUrl } = await testStores();
  const proxy = new MongoProxy(mongoUrl);
  const port = await proxy.listen();
  const config: DataConfig = {
    ...platform.dataConfig,
    MONGO_URL: `mongodb://127.0.0.1:${port}/?directConnection=true`,
    ...overrides,
  };
  const data = await createDataService(config, createLogger("data-proxied", config.LOG_LEVEL));
  const server = http.createServer(data.app.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    proxy,
    data,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await data.close();
      await proxy.close();
    },
  };
}

/** Runs `post` while the proxy drops the store connection as `drop` says; the reply must be 503/5031. */
export async function expectCutOff(
  proxy: MongoProxy,
  drop: DropPlan,
  post: () => Promise<{ status: number; body: { errorCode?: number } }>,
): Promise<void> {
  const dropped = proxy.armDrop(drop);
  const r = await post();
  await dropped;
  expect(r.status, JSON.stringify(r.body)).to.equal(503);
  expect(r.body.errorCode).to.equal(5031);
}
