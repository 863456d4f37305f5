/**
 * `GET …/@docs`, the OpenAPI 3.1 document of an API version, through the edge:
 * validated with an OpenAPI validator and every schema compiled as JSON Schema
 * 2020-12; requests generated from the document (paths and bodies sampled from
 * its schemas) are accepted, and real answers match its schemas. The document
 * shows what the key may do; a role with `apiDocs` sees everything; a project
 * may publish it to callers without a key. On request (`?format=swagger2` or
 * `Accept: application/swagger+json`) the same view comes as Swagger 2.0,
 * validated by the same validator.
 */
import { compileErrors, validate } from "@readme/openapi-parser";
import { Ajv2020 } from "ajv/dist/2020.js";
import { expect } from "chai";
import { sample } from "openapi-sampler";
import { renderDelivery } from "../../../services/data/src/hooks/payload.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

/** OpenAPI documents and answers, walked by path in the assertions. */
// biome-ignore lint/suspicious/noExplicitAny: the tests read documents whose shape they check themselves
type Json = Record<string, any>;

function docsProject(overrides: Record<string, unknown> = {}) {
  const def = demoProject(overrides);
  (def.tables as Record<string, unknown>).line = {
    key: ["order_number", "line_no"],
    columns: {
      order_number: { type: "integer", required: true },
      line_no: { type: "integer", required: true },
      product: { type: "string", required: true, maxLength: 40 },
      shipped: { type: "date" },
      attributes: { type: "json" },
    },
    parents: {
      order: { table: "purchaseorder", columns: { order_number: "order_number" }, children: "lines" },
    },
  };
  // Named as the document's own tags could be: they must stay apart.
  (def.tables as Record<string, unknown>).meta = { key: ["id"], columns: { id: { type: "string" } } };
  Object.assign(def.roles, {
    "API docs": { apiDocs: true, tables: {} },
    "Order clerk": {
      tables: {
        purchaseorder: {
          access: ["read", "insert"],
          columns: ["order_number", "customer_name", "amount_total"],
        },
      },
    },
  });
  return def;
}

/** The document must be valid OpenAPI 3.1, and each of its schemas valid JSON Schema 2020-12 (Ajv strict). */
async function expectValidDocument(doc: Json): Promise<Ajv2020> {
  const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
  expect(result.valid, result.valid ? "" : compileErrors(result)).to.equal(true);
  // A rule of the specification that the validator leaves out: tag names are unique.
  const tags = (doc.tags as Json[]).map((t) => t.name);
  expect(tags).to.have.length(new Set(tags).size);
  const ajv = new Ajv2020({ strict: true, validateFormats: false, allErrors: true });
  ajv.addKeyword("components");
  ajv.addSchema({ $id: "doc", components: doc.components });
  for (const name of Object.keys(doc.components.schemas)) {
    expect(ajv.getSchema(`doc#/components/schemas/${name}`), name).to.be.a("function");
  }
  return ajv;
}

/** The document must be valid Swagger 2.0 (the validator checks it against the 2.0 schema and resolves every $ref). */
async function expectValidSwagger2(doc: Json): Promise<void> {
  const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
  expect(result.valid, result.valid ? "" : compileErrors(result)).to.equal(true);
  expect(doc.swagger).to.equal("2.0");
  // No OpenAPI 3 parts left behind, anywhere (a $ref to components would not resolve in 2.0).
  expect(JSON.stringify(doc)).to.not.match(
    /#\/components\/|"(anyOf|oneOf|prefixItems|const|requestBody|nullable)":/,
  );
}

/** Checks an answer against the schema the document gives for it. */
function expectMatches(ajv: Ajv2020, schema: Json, value: unknown, what: string): void {
  const check = ajv.compile(
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')),
  );
  expect(check(value), `${what}: ${ajv.errorsText(check.errors)}`).to.equal(true);
}

/** A body sampled from the schema of an operation's JSON request body. */
function sampleBody(doc: Json, operation: Json): Json {
  const schema = operation.requestBody.content["application/json"].schema;
  return sample(schema, { quiet: true }, doc) as Json;
}

/** The `{key}` path segment from samples of the key parameter's schema (style simple: values joined by ','). */
function sampleKey(doc: Json, path: string): string {
  const key = doc.paths[path].parameters.find((p: Json) => p.name === "key");
  const parts: Json[] = key.schema.prefixItems ?? [key.schema];
  return parts.map((s) => encodeURIComponent(String(sample(s as Json, {}, doc)))).join(",");
}

const jsonSchema = (responses: Json, status: string) => responses[status].content["application/json"].schema;

describe("API documents (@docs)", () => {
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let demo: ReturnType<typeof projectClient>;
  const keys: Record<string, string> = {};
  const docOf = async (key: string | undefined, project = demo) => project.get(key, "@docs");

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    expect((await admin.putProject("acme", "demo", docsProject())).status).to.equal(201);
    demo = projectClient(platform.baseUrl, "acme", "demo");
    for (const [name, roles, globals] of [
      ["full", ["Full access"], {}],
      ["west", ["Region reader"], { region: "west" }],
      ["docs", ["API docs"], {}],
      ["clerk", ["Order clerk"], {}],
      ["noDelete", ["No delete"], {}],
    ] as [string, string[], Json][]) {
      keys[name] = (await admin.createKey("acme", "demo", { name, roles, globals })).body.apikey;
    }
  });
  after(() => platform.close());

  it("is a valid OpenAPI 3.1 document of the version, answered as JSON", async () => {
    const r = await docOf(keys.full);
    expect(r.status).to.equal(200);
    expect(r.headers.get("content-type")).to.equal("application/json; charset=utf-8");
    const doc = r.body as Json;
    await expectValidDocument(doc);
    expect(doc.openapi).to.equal("3.1.0");
    expect(doc.servers).to.deep.equal([{ url: `${platform.baseUrl}/rest/acme/demo/v1` }]);
    expect(Object.keys(doc.paths)).to.include.members([
      "/customer",
      "/customer/{key}",
      "/line/{key}",
      "/Customers",
      "/Customers.Orders/{key}",
      "/@tables",
      "/@tables/{table}",
      "/@resources",
      "/@license",
      "/@heartbeat",
      "/@docs",
      "/@authentication",
    ]);
    expect(Object.keys(doc.paths["/customer"])).to.have.members(["get", "post", "put"]);
    expect(Object.keys(doc.paths["/customer/{key}"])).to.have.members(["parameters", "get", "put", "delete"]);
    const listParameters = doc.paths["/customer"].get.parameters.map((p: Json) => p.$ref.split("/").pop());
    expect(listParameters).to.include.members([
      "filter",
      "order",
      "sysfilter",
      "sysorder",
      "pagesize",
      "offset",
    ]);
    expect(listParameters).to.include.members([
      "nometa",
      "responseformat",
      "X-CALiveAPICreator-ResponseFormat",
    ]);
    // The live-query form of the GET: Server-Sent Events, resumed with Last-Event-ID.
    expect(listParameters).to.include("lastEventId");
    expect(doc.paths["/customer"].get.responses["200"].content).to.have.property("text/event-stream");
    const deleteParameters = doc.paths["/customer/{key}"].delete.parameters.map((p: Json) =>
      p.$ref.split("/").pop(),
    );
    expect(deleteParameters).to.have.members(["checksum", "ignoredeleted", "txsummary", "rulesummary"]);
    expect(doc.components.securitySchemes).to.have.keys(["apiKey", "authParameter"]);
    expect(doc.components.securitySchemes.apiKey.description).to.contain("`CALiveAPICreator`");
    // Nesting: the custom resource's rows hold their sub-resource.
    expect(doc.components.schemas["row.Customers"].properties.Orders.type).to.equal("array");
    // A composite key is two values joined by ','.
    const lineKey = doc.paths["/line/{key}"].parameters[0];
    expect([lineKey.style, lineKey.explode, lineKey.schema.prefixItems.length]).to.deep.equal([
      "simple",
      false,
      2,
    ]);
    // @authentication: the built-in provider's credentials, revalidation and disable, their answers.
    const auth = doc.paths["/@authentication"].post;
    const bodies = auth.requestBody.content["application/json"].schema.anyOf;
    expect(bodies[0].required).to.deep.equal(["username", "password"]);
    expect(bodies[0].properties).to.have.property("newPassword");
    expect(auth.parameters[0].$ref).to.equal("#/components/parameters/enablePasswordChange");
    expect(auth.security).to.deep.equal([]);
  });

  it("describes webhook deliveries, and a delivery body matches the description", async () => {
    const doc = (await docOf(keys.full)).body as Json;
    const ajv = await expectValidDocument(doc);
    const post = doc.webhooks.rowChange.post;
    expect(post.parameters.map((p: Json) => `${p.in} ${p.name}`)).to.deep.equal([
      "header webhook-id",
      "header webhook-timestamp",
      "header webhook-signature",
    ]);
    const delivery = renderDelivery(
      { account: "acme", project: "demo", subscription: "wh_1" },
      {
        id: "1764150000000-0",
        tx: "t",
        table: "customer",
        verb: "DELETE",
        key: "Alpha",
        row: null,
        oldRow: { _id: "Alpha", _ck: "c", name: "Alpha", balance: 1 },
        oldChecksum: "c",
        rules: [],
      },
    );
    expectMatches(
      ajv,
      post.requestBody.content["application/json"].schema,
      JSON.parse(delivery.body),
      "delivery",
    );
    const bad = { ...JSON.parse(delivery.body), type: "row.merged" };
    const check = ajv.compile(post.requestBody.content["application/json"].schema);
    expect(check(bad)).to.equal(false);
  });

  it("requests generated from the document are accepted, and the answers match its schemas", async () => {
    const doc = (await docOf(keys.full)).body as Json;
    const ajv = await expectValidDocument(doc);
    const send = (method: string, path: string, body?: unknown): Promise<Reply> =>
      call("", method, `${doc.servers[0].url}${path}`, { body, headers: keyHeader(keys.full!) });

    // A customer with nested orders with nested lines: a body sampled from the insert schema.
    const post = doc.paths["/customer"].post;
    const inserted = await send("POST", "/customer", sampleBody(doc, post));
    expect(inserted.status, JSON.stringify(inserted.body)).to.equal(201);
    expectMatches(ajv, jsonSchema(post.responses, "201"), inserted.body, "POST /customer");
    expect(inserted.body.txsummary.map((o: Json) => o["@metadata"].resource)).to.deep.equal([
      "customer",
      "purchaseorder",
      "line",
    ]);
    for (const table of ["customer", "purchaseorder", "line"]) {
      const path = `/${table}/${sampleKey(doc, `/${table}/{key}`)}`;
      const read = await send("GET", path);
      expect(read.status).to.equal(200);
      expect(read.body, path).to.have.length(1);
      expectMatches(
        ajv,
        jsonSchema(doc.paths[`/${table}/{key}`].get.responses, "200"),
        read.body,
        `GET ${path}`,
      );
    }

    // An update from the update schema, with the checksum as read.
    const customerPath = `/customer/${sampleKey(doc, "/customer/{key}")}`;
    const current = (await send("GET", customerPath)).body[0];
    const put = doc.paths["/customer/{key}"].put;
    const update = sampleBody(doc, put);
    update["@metadata"].checksum = current["@metadata"].checksum;
    const updated = await send("PUT", customerPath, update);
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expectMatches(ajv, jsonSchema(put.responses, "200"), updated.body, "PUT");

    // Pages (with next_batch), nested resources and errors match too.
    for (const path of ["/customer?pagesize=1", "/Customers", "/Customers.Orders", "/line"]) {
      const page = await send("GET", path);
      expect(page.status).to.equal(200);
      const op = doc.paths[path.split("?")[0]!].get;
      expectMatches(ajv, jsonSchema(op.responses, "200"), page.body, `GET ${path}`);
    }
    const missing = await send("GET", "/customer?filter=nope%20%3E");
    expect(missing.status).to.equal(400);
    expectMatches(ajv, doc.components.schemas.Error, missing.body, "error");
    const login = await admin.putUser("acme", "demo", "alice", {
      password: "pw-alice-123",
      roles: ["Full access"],
    });
    expect(login.status).to.equal(201);
    const loggedIn = await demo.login({ username: "alice", password: "pw-alice-123" });
    const authOp = doc.paths["/@authentication"].post;
    expectMatches(ajv, jsonSchema(authOp.responses, "200"), loggedIn.body, "login");
    const disabled = await demo.login({ apikey: loggedIn.body.apikey, disable: true });
    expectMatches(ajv, jsonSchema(authOp.responses, "200"), disabled.body, "disable");
  });

  it("shows a key only the resources, verbs and columns its roles allow, and its reads match", async () => {
    const doc = (await docOf(keys.west)).body as Json;
    const ajv = await expectValidDocument(doc);
    expect(doc.info.description).to.contain("as the key used to fetch this document may use it");
    const resourcePaths = Object.keys(doc.paths).filter((p) => !p.startsWith("/@"));
    expect(resourcePaths).to.have.members(["/customer", "/customer/{key}", "/Customers", "/Customers/{key}"]);
    expect(Object.keys(doc.paths["/customer"])).to.deep.equal(["get"]);
    expect(Object.keys(doc.paths["/customer/{key}"])).to.deep.equal(["parameters", "get"]);
    expect(Object.keys(doc.components.schemas["row.customer"].properties)).to.deep.equal([
      "@metadata",
      "name",
      "balance",
      "region",
    ]);
    expect(doc.components.schemas["row.Customers"].properties).to.not.have.property("Orders");
    expect(Object.keys(doc.components.schemas).filter((n) => /^(insert|update)\./.test(n))).to.deep.equal([]);
    // What the key really reads matches its document (hidden columns would be extra properties).
    await demo.post(keys.full, "customer", [{ name: "W1", region: "west", credit_limit: 7 }]);
    const page = await demo.get(keys.west, "customer");
    expect(page.body.length).to.be.greaterThan(0);
    expectMatches(ajv, jsonSchema(doc.paths["/customer"].get.responses, "200"), page.body, "west's page");

    const clerk = (await docOf(keys.clerk)).body as Json;
    await expectValidDocument(clerk);
    // Its table is readable, so the nested resource over it is there on its own too.
    expect(Object.keys(clerk.paths).filter((p) => !p.startsWith("/@"))).to.have.members([
      "/purchaseorder",
      "/purchaseorder/{key}",
      "/Customers.Orders",
      "/Customers.Orders/{key}",
    ]);
    expect(Object.keys(clerk.paths["/purchaseorder"])).to.have.members(["get", "post"]);
    expect(Object.keys(clerk.components.schemas["insert.purchaseorder"].properties)).to.deep.equal([
      "@metadata",
      "order_number",
      "customer_name",
      "amount_total",
    ]);
    const noDelete = (await docOf(keys.noDelete)).body as Json;
    expect(Object.keys(noDelete.paths["/customer/{key}"])).to.have.members(["parameters", "get", "put"]);
  });

  it("shows a role with apiDocs the whole API, though it may not use it", async () => {
    const whole = (await docOf(keys.docs)).body as Json;
    const full = (await docOf(keys.full)).body as Json;
    await expectValidDocument(whole);
    expect(whole.info.description).to.equal("The whole API of this version.");
    expect(whole.paths).to.deep.equal(full.paths);
    expect(whole.components.schemas).to.deep.equal(full.components.schemas);
    expect((await demo.get(keys.docs, "customer")).status).to.equal(403);
  });

  it("needs a key unless the project publishes its documents, and then tells no more than 401 otherwise", async () => {
    const noKey = await docOf(undefined);
    expect([noKey.status, noKey.body.errorCode]).to.deep.equal([401, 4011]);
    const noProject = await call(platform.baseUrl, "GET", "/rest/acme/nothing/v1/@docs");
    expect(noProject.body).to.deep.include({ statusCode: 401, errorCode: 4011 });
    expect(noProject.body.errorMessage).to.equal(noKey.body.errorMessage);

    const open = docsProject({
      apiDocs: { public: true },
      authentication: { provider: "builtin", permitAuthParameter: false },
    });
    expect((await admin.putProject("acme", "open", open)).status).to.equal(201);
    const openClient = projectClient(platform.baseUrl, "acme", "open");
    const anonymous = await docOf(undefined, openClient);
    expect(anonymous.status).to.equal(200);
    const doc = anonymous.body as Json;
    await expectValidDocument(doc);
    expect(doc.info.description).to.equal("The whole API of this version.");
    expect(doc.paths["/@docs"].get.security).to.deep.equal([{}, { apiKey: [] }]);
    // The project refuses ?auth=: the document says so.
    expect(doc.components.securitySchemes).to.have.keys(["apiKey"]);
    expect(doc.paths["/customer"].get.security).to.deep.equal([{ apiKey: [] }]);
    // Only a request without any key is anonymous; a bad key is still refused, and data still needs one.
    const badKey = await openClient.get("tsk_notakey", "@docs");
    expect([badKey.status, badKey.body.errorCode]).to.deep.equal([401, 4011]);
    const otherVersion = await call(platform.baseUrl, "GET", "/rest/acme/open/v9/@docs");
    expect(otherVersion.status).to.equal(401);
    expect((await call(platform.baseUrl, "GET", `${openClient.root}/customer`)).status).to.equal(401);
  });

  it("follows changes of the definition", async () => {
    const before = (await docOf(keys.docs)).body as Json;
    const changed = docsProject();
    (changed.tables as Record<string, unknown>).supplier = {
      key: ["code"],
      columns: { code: { type: "string", required: true } },
    };
    expect((await admin.putProject("acme", "demo", changed)).status).to.equal(200);
    const after = (await docOf(keys.docs)).body as Json;
    expect(before.paths).to.not.have.property("/supplier");
    expect(Object.keys(after.paths["/supplier"])).to.have.members(["get", "post", "put"]);
    expect(after.info.version).to.not.equal(before.info.version);
  });

  describe("as Swagger 2.0", () => {
    it("?format=swagger2 answers a valid Swagger 2.0 document with definitions and basePath", async () => {
      const r = await demo.get(keys.full, "@docs?format=swagger2");
      expect(r.status).to.equal(200);
      expect(r.headers.get("content-type")).to.equal("application/json; charset=utf-8");
      const doc = r.body as Json;
      await expectValidSwagger2(doc);
      const url = new URL(platform.baseUrl);
      expect([doc.host, doc.basePath, doc.schemes]).to.deep.equal([url.host, "/rest/acme/demo/v1", ["http"]]);
      expect(doc.definitions["row.customer"].properties.region).to.deep.include({
        type: "string",
        "x-nullable": true,
      });
      expect(doc.paths["/customer"].post.parameters.find((p: Json) => p.in === "body").required).to.equal(
        true,
      );
      expect(doc.paths["/customer"].get.produces).to.have.members([
        "application/json",
        "text/csv",
        "application/xml",
        "text/event-stream",
      ]);
      expect(doc.parameters.filter).to.deep.include({ type: "array", collectionFormat: "multi" });
      expect(doc.paths["/line/{key}"].parameters[0]).to.deep.include({
        type: "array",
        collectionFormat: "csv",
      });
      expect(doc.securityDefinitions.apiKey).to.deep.include({
        type: "apiKey",
        in: "header",
        name: "Authorization",
      });
    });

    it("has the same paths and schemas as the OpenAPI 3.1 document of the same view", async () => {
      for (const key of [keys.full, keys.west, keys.clerk]) {
        const openApi = (await docOf(key)).body as Json;
        const swagger = (await demo.get(key, "@docs?format=swagger2")).body as Json;
        await expectValidSwagger2(swagger);
        expect(Object.keys(swagger.paths)).to.deep.equal(Object.keys(openApi.paths));
        expect(Object.keys(swagger.definitions)).to.deep.equal(Object.keys(openApi.components.schemas));
      }
      const west = (await demo.get(keys.west, "@docs?format=swagger2")).body as Json;
      expect(Object.keys(west.definitions["row.customer"].properties)).to.have.members([
        "@metadata",
        "name",
        "balance",
        "region",
      ]);
      expect(west.paths).to.not.have.property("/purchaseorder");
    });

    it("is what Accept: application/swagger+json asks for; the parameter wins; OpenAPI 3.1 otherwise", async () => {
      const accepted = await demo.get(keys.full, "@docs", { accept: "application/swagger+json" });
      expect(accepted.body.swagger).to.equal("2.0");
      expect(accepted.headers.get("vary")).to.contain("Accept");
      const asked = await demo.get(keys.full, "@docs?format=openapi3", {
        accept: "application/swagger+json",
      });
      expect(asked.body.openapi).to.equal("3.1.0");
      const plain = await demo.get(keys.full, "@docs", { accept: "application/json, */*;q=0.1" });
      expect(plain.body.openapi).to.equal("3.1.0");
    });

    it("an unknown format is 400/4001", async () => {
      const r = await demo.get(keys.full, "@docs?format=raml");
      expect([r.status, r.body.errorCode]).to.deep.equal([400, 4001]);
      expect(r.body.errorMessage).to.contain("openapi3, swagger2");
    });
  });

  it("answers only JSON", async () => {
    const r = await demo.get(keys.full, "@docs", { "X-CALiveAPICreator-ResponseFormat": "xml" });
    expect([r.status, r.body.errorCode]).to.deep.equal([400, 4001]);
    const sdkLike = await demo.get(keys.full, "@docs", { "X-liveapicreatorLogic-ResponseFormat": "json" });
    expect(sdkLike.status).to.equal(200);
  });
});
