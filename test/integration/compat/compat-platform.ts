/**
 * Shared set-up of the client-compatibility tests: the whole platform on
 * loopback, one account `acme` with the demo project, a built-in user `alice`
 * (Full access), and a manual key the tests use to check outcomes through the
 * API itself rather than through the client under test.
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

export const USER = "alice";
export const PASSWORD = "pw-alice-compat-1";

export interface CompatPlatform {
  platform: Platform;
  admin: ReturnType<typeof adminClient>;
  /** Checks outcomes through the API (Tessera scheme, manual key). */
  api: ReturnType<typeof projectClient>;
  /** A Full access manual key for `api`. */
  checkKey: string;
  /** What the clients are configured with: `<edge>/rest/acme/demo/v1`, no trailing slash. */
  projectUrl: string;
}

export async function startCompatPlatform(): Promise<CompatPlatform> {
  const platform = await startPlatform();
  const admin = adminClient(platform.baseUrl, platform.adminToken);
  expect((await admin.putAccount("acme")).status).to.equal(201);
  expect((await admin.putProject("acme", "demo", demoProject())).status).to.equal(201);
  expect(
    (await admin.putUser("acme", "demo", USER, { password: PASSWORD, roles: ["Full access"] })).status,
  ).to.equal(201);
  const created = await admin.createKey("acme", "demo", { name: "compat checker", roles: ["Full access"] });
  expect(created.status).to.equal(201);
  return {
    platform,
    admin,
    api: projectClient(platform.baseUrl, "acme", "demo"),
    checkKey: created.body.apikey,
    projectUrl: `${platform.baseUrl}/rest/acme/demo/v1`,
  };
}
