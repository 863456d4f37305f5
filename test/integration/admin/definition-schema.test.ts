/**
 * GET /admin/v1/definition-schema: the JSON Schema of a project definition, made from
 * the server's own definition schema. Every administrator (a reader too) and the operator
 * may read it; there is nothing to write there (405). It agrees with the server: definitions the server
 * accepts pass it, and structural mistakes the server refuses fail it — checked with an
 * independent validator (Ajv) and with the console's own walker.
 */

import { Ajv2020 } from "ajv/dist/2020.js";
import { expect } from "chai";
import { schemaProblems } from "../../../services/console/ui/src/definition/json-schema.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminKey, putAdmin } from "../../support/admins.ts";
import { adminClient, call } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("admin API: the definition schema", function () {
  this.timeout(60_000);
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let readerKey: string;

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    expect((await admin.putAccount("acme")).status).to.equal(201);
    await putAdmin(admin, "acme", "rita", "reader", "reader-pw-1");
    readerKey = await adminKey(platform.baseUrl, "acme", "rita", "reader-pw-1");
  });
  after(async () => platform.close());

  const asReader = (method: string, body?: unknown) =>
    call(platform.baseUrl, method, "/admin/v1/definition-schema", {
      body,
      headers: { authorization: `Bearer ${readerKey}` },
    });

  it("answers a reader and the operator the same schema; nothing else", async () => {
    const byReader = await asReader("GET");
    expect(byReader.status, JSON.stringify(byReader.body)).to.equal(200);
    expect(byReader.body.$schema).to.equal("https://json-schema.org/draft/2020-12/schema");
    expect(byReader.body.required).to.have.members(["tables", "apiVersions"]);
    expect(
      byReader.body.properties.tables.additionalProperties.properties.columns.additionalProperties.properties
        .type.enum,
    ).to.include("datetime");
    const byOperator = await admin.send("GET", "/definition-schema");
    expect(byOperator.body).to.deep.equal(byReader.body);

    const anonymous = await call(platform.baseUrl, "GET", "/admin/v1/definition-schema");
    expect(anonymous.status).to.equal(401);
    const written = await asReader("PUT", {});
    expect(written.status).to.equal(405);
    expect(written.body.errorCode).to.equal(4051);
  });

  it("agrees with the server on what it accepts and what it refuses", async () => {
    const schema = (await asReader("GET")).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const good = demoProject();
    const wrongType = JSON.parse(JSON.stringify(good));
    wrongType.tables.customer.columns.name.type = "text";
    const unknownField = { ...good, tabels: {} };
    const cases: [string, unknown, boolean][] = [
      ["the demo project", good, true],
      ["a column of an unknown type", wrongType, false],
      ["an unknown field", unknownField, false],
      ["no tables", { apiVersions: {} }, false],
    ];
    for (const [what, definition, accepted] of cases) {
      const server = await admin.send("PUT", "/accounts/acme/projects/p?dryRun=true", definition);
      expect(server.status === 200, `${what}: server ${JSON.stringify(server.body)}`).to.equal(accepted);
      expect(validate(definition), `${what}: ajv ${JSON.stringify(validate.errors)}`).to.equal(accepted);
      expect(schemaProblems(schema, definition).length === 0, `${what}: the console's walker`).to.equal(
        accepted,
      );
    }
  });
});
