/**
 * Logins with short-lived keys leave nothing behind in the project's key index once
 * their keys are gone (the index logic itself: key-layout.test.ts).
 */
import { expect } from "chai";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { keyIndexKey } from "../../../shared/redis/key-layout.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";

describe("logins leave nothing in the key index once their keys are gone", () => {
  let platform: Platform;
  let redis: RedisClient;

  before(async () => {
    platform = await startPlatform({ KEY_RETENTION_SECONDS: "0" });
    redis = await testRedisClient();
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await admin.putProject("acme", "demo", demoProject());
    await admin.putUser("acme", "demo", "brief", {
      password: "brief-password",
      roles: ["Full access"],
      keyLifetimeSeconds: 1,
    });
  });
  after(async () => {
    redis?.disconnect();
    await platform?.close();
  });

  it("20 logins with one-second keys: once they expire the project's index is gone, and the listing is empty", async () => {
    const demo = projectClient(platform.baseUrl, "acme", "demo");
    for (let i = 0; i < 20; i++)
      expect((await demo.login({ username: "brief", password: "brief-password" })).status).to.equal(200);
    const index = keyIndexKey(`tessera-test:${platform.prefix}`, "acme", "demo");
    await until("the index gone", async () => (await redis.exists(index)) === 0);
    const listing = await adminClient(platform.baseUrl, platform.adminToken).listKeys("acme", "demo");
    expect(listing.body).to.deep.equal([]);
  });
});
