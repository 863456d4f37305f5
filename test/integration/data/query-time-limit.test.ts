/**
 * A query that runs past QUERY_TIMEOUT_MS (the store stops it at its maxTimeMS) is
 * answered 503/5031 saying so, not as an "unexpected error" (500). A
 * second data service of the same platform runs with a 1 ms limit, which any
 * filtered, ordered read of a few thousand rows exceeds on the store.
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { type ProxiedDataService, startProxiedDataService } from "../rules/proxied-data-service.ts";

describe("a query past its time limit", () => {
  let platform: Platform;
  let limited: ProxiedDataService;
  let key: string;
  const filter = `customer?filter=${encodeURIComponent("name like '%9%9%'")}&order=${encodeURIComponent("credit_limit desc")}&pagesize=5`;

  before(async () => {
    platform = await startPlatform();
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await admin.putProject("acme", "demo", demoProject());
    key = (await admin.createKey("acme", "demo", { name: "full", roles: ["Full access"] })).body.apikey;
    const demo = projectClient(platform.baseUrl, "acme", "demo");
    for (let batch = 0; batch < 6; batch++) {
      const rows = Array.from({ length: 500 }, (_, i) => ({
        name: `cust-${batch * 500 + i}`,
        region: "east",
        credit_limit: i,
      }));
      expect((await demo.post(key, "customer", rows)).status).to.equal(201);
    }
    limited = await startProxiedDataService(platform, { QUERY_TIMEOUT_MS: 1 });
  });
  after(async () => {
    await limited?.close();
    await platform?.close();
  });

  it("is 503/5031 with a message that says what happened; the same read within the limit works", async () => {
    const within = await projectClient(platform.baseUrl, "acme", "demo").get(key, filter);
    expect(within.status, JSON.stringify(within.body)).to.equal(200);

    const r = await projectClient(limited.baseUrl, "acme", "demo").get(key, filter);
    expect(r.status, JSON.stringify(r.body)).to.equal(503);
    expect(r.body).to.include({ statusCode: 503, errorCode: 5031 });
    expect(r.body.errorMessage).to.match(/took longer than its time limit; nothing was written/);
  });
});
