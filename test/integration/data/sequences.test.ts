/**
 * Generated keys under concurrency, across two data-service processes of one
 * deployment, and after the sequence state in Redis is lost.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { createDataService, type DataService } from "../../../services/data/src/service.ts";
import { createLogger } from "../../../shared/logger.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { deleteKeys, keysMatching, testRedisClient } from "../../support/stores.ts";

describe("generated keys", () => {
  let platform: Platform;
  let second: DataService;
  let server: http.Server;
  let key: string;
  let viaGateway: ReturnType<typeof projectClient>;
  let viaSecond: ReturnType<typeof projectClient>;

  before(async () => {
    platform = await startPlatform();
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await admin.putProject("acme", "demo", demoProject());
    key = (await admin.createKey("acme", "demo", { name: "k", roles: ["Full access"] })).body.apikey;
    second = await createDataService(platform.dataConfig, createLogger("data2", "silent"));
    server = http.createServer(second.app.callback());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    viaGateway = projectClient(platform.baseUrl, "acme", "demo");
    viaSecond = projectClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "acme", "demo");
    await viaGateway.post(key, "customer", { name: "Jones" });
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await second.close();
    await platform.close();
  });

  it("are distinct for concurrent inserts through two processes", async () => {
    const replies = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (i % 2 ? viaGateway : viaSecond).post(key, "purchaseorder", {
          customer_name: "Jones",
          amount_total: i,
        }),
      ),
    );
    expect(replies.map((r) => r.status)).to.deep.equal(Array(60).fill(201));
    const numbers = replies.map((r) => r.body.txsummary[0].order_number as number);
    expect(new Set(numbers).size).to.equal(60);
  });

  it("continue above the highest stored key when Redis has lost the sequence", async () => {
    const redis = await testRedisClient();
    const names = await keysMatching(redis, `tessera-test:${platform.prefix}seq:*`);
    expect(names).to.have.length(1);
    await deleteKeys(redis, names);
    redis.disconnect();
    const rows = (await viaGateway.get(key, "purchaseorder?pagesize=100")).body as {
      order_number?: number;
    }[];
    const highest = Math.max(...rows.filter((r) => r.order_number !== undefined).map((r) => r.order_number!));
    const r = await viaGateway.post(key, "purchaseorder", { customer_name: "Jones" });
    expect(r.status).to.equal(201);
    expect(r.body.txsummary[0].order_number).to.equal(highest + 1);
  });
});
