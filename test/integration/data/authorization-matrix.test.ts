/**
 * Authorisation matrix as data (docs/project-definitions.md, roles): two accounts × two projects × three
 * roles × every verb × a table and a custom resource. Every cell is asserted.
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

type Verb = "read" | "insert" | "update" | "delete";
const VERBS: Verb[] = ["read", "insert", "update", "delete"];

/** Role → what it may do to a customer it can see. */
const EXPECTED: Record<string, Record<Verb, boolean>> = {
  "Full access": { read: true, insert: true, update: true, delete: true },
  "Region reader": { read: true, insert: false, update: false, delete: false },
  "No delete": { read: true, insert: true, update: true, delete: false },
};

describe("authorisation matrix", () => {
  let platform: Platform;
  const projects = [
    ["acme", "sales"],
    ["acme", "support"],
    ["globex", "sales"],
    ["globex", "support"],
  ] as const;
  const keys = new Map<string, string>();
  let seq = 0;

  before(async () => {
    platform = await startPlatform();
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    for (const account of ["acme", "globex"]) await admin.putAccount(account);
    for (const [account, project] of projects) {
      await admin.putProject(account, project, demoProject());
      const full = (await admin.createKey(account, project, { name: "seed", roles: ["Full access"] })).body
        .apikey;
      const client = projectClient(platform.baseUrl, account, project);
      await client.post(full, "customer", [
        { name: "West One", region: "west", credit_limit: 5 },
        { name: "East One", region: "east", credit_limit: 6 },
      ]);
      for (const role of Object.keys(EXPECTED)) {
        const key = await admin.createKey(account, project, {
          name: role,
          roles: [role],
          globals: { region: "west" },
        });
        keys.set(`${account}/${project}/${role}`, key.body.apikey);
      }
      keys.set(`${account}/${project}/full`, full);
    }
  });
  after(() => platform.close());

  async function attempt(
    account: string,
    project: string,
    key: string,
    resource: "table" | "custom",
    verb: Verb,
  ) {
    const client = projectClient(platform.baseUrl, account, project);
    const full = keys.get(`${account}/${project}/full`)!;
    const path = resource === "table" ? "customer" : "Customers";
    const nameAttr = resource === "table" ? "name" : "Name";
    const regionAttr = resource === "table" ? "region" : "Region";
    const name = `C${++seq}`;
    if (verb !== "insert") await client.post(full, "customer", { name, region: "west" });
    switch (verb) {
      case "read":
        return client.get(key, `${path}/${name}`);
      case "insert":
        return client.post(key, path, { [nameAttr]: name, [regionAttr]: "west" });
      case "update":
        return client.put(key, `${path}/${name}`, {
          "@metadata": { checksum: "override" },
          [regionAttr]: "west",
        });
      case "delete":
        return client.delete(key, `${path}/${name}?checksum=override`);
    }
  }

  for (const [account, project] of projects) {
    for (const role of Object.keys(EXPECTED)) {
      for (const resource of ["table", "custom"] as const) {
        for (const verb of VERBS) {
          const allowed = EXPECTED[role]![verb];
          it(`${account}/${project} · ${role} · ${resource} · ${verb} → ${allowed ? "allowed" : "403"}`, async () => {
            const r = await attempt(
              account,
              project,
              keys.get(`${account}/${project}/${role}`)!,
              resource,
              verb,
            );
            if (allowed) {
              expect(r.status, JSON.stringify(r.body)).to.equal(verb === "insert" ? 201 : 200);
              if (verb === "read") expect(r.body).to.have.length(1);
            } else {
              expect(r.status, JSON.stringify(r.body)).to.equal(403);
              expect(r.body.errorCode).to.equal(4031);
            }
          });
        }
      }
    }
  }

  it("keys of every other project are refused with 401/4012 on every verb", async () => {
    for (const [account, project] of projects) {
      for (const [otherAccount, otherProject] of projects) {
        if (account === otherAccount && project === otherProject) continue;
        const key = keys.get(`${otherAccount}/${otherProject}/full`)!;
        for (const verb of VERBS) {
          const r = await attempt(account, project, key, "table", verb);
          expect(r.status, `${otherAccount}/${otherProject} key on ${account}/${project} ${verb}`).to.equal(
            401,
          );
          expect(r.body.errorCode).to.equal(4012);
        }
      }
    }
  });
});
