import { expect } from "chai";
import type { DataServiceClient } from "../../../services/auth/src/clients/data-service-client.ts";
import { createIdentityFieldsCache } from "../../../services/auth/src/domain/identity-fields-cache.ts";
import type { ProjectSettings } from "../../../shared/contracts/internal-api.ts";

/** A data service that knows every project `a<n>/p` (revision 1) and counts the settings it was asked for. */
function countingData(): { data: DataServiceClient; asked: () => number } {
  let asked = 0;
  const settings = (account: string, project: string): ProjectSettings => ({
    account,
    name: project,
    uid: `uid-${account}`,
    revision: 1,
    versions: ["v1"],
    roles: [],
    provider: "builtin",
    keyLifetimeSeconds: 3600,
    identityFields: ["username"],
  });
  const data = {
    settings: async (account: string, project: string) => {
      asked++;
      return settings(account, project);
    },
    loginInfo: async () => null,
  } as unknown as DataServiceClient;
  return { data, asked: () => asked };
}

describe("identity fields cache", () => {
  it("asks the data service once per project while it fits", async () => {
    const { data, asked } = countingData();
    const cache = createIdentityFieldsCache(data);
    for (let round = 0; round < 3; round++) {
      for (let n = 0; n < 50; n++) {
        expect(await cache.get(`a${n}`, "p", "r")).to.deep.equal({ fields: ["username"] });
      }
    }
    expect(asked()).to.equal(50);
  });

  it("is bounded by memory: past its budget the least recently used projects go, recent ones stay", async () => {
    const { data, asked } = countingData();
    const cache = createIdentityFieldsCache(data, 16 * 1024);
    await cache.get("a0", "p", "r");
    for (let n = 1; n <= 1000; n++) {
      await cache.get(`a${n}`, "p", "r");
      await cache.get("a0", "p", "r"); // kept in use
    }
    const before = asked();
    expect(before).to.equal(1001);
    await cache.get("a0", "p", "r");
    await cache.get("a1000", "p", "r");
    expect(asked(), "recently used projects are still cached").to.equal(before);
    await cache.get("a1", "p", "r");
    expect(asked(), "the least recently used project was let go").to.equal(before + 1);
  });
});
