/**
 * A generated client, as third parties make them: `swagger-client` driven by the project's own API
 * documents (`@docs`, OpenAPI 3.1 and Swagger 2.0), through list, get, insert, update and delete of
 * a table resource, against the real data API through the gateway. Such clients send every media
 * type an operation's document lists in `Accept` (a list's `text/event-stream` among them): the
 * answer must be the page, not a live query's stream (content negotiation, docs/realtime.md).
 */
import { expect } from "chai";
import SwaggerClient from "swagger-client";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

// biome-ignore lint/suspicious/noExplicitAny: JSON read freely by tests
type Json = any;

/** What swagger-client's execute answers (it throws for a status that is not 2xx, with the answer). */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Json;
}

describe("a generated client (swagger-client) driven by @docs", function () {
  this.timeout(120_000);
  let platform: Platform;
  let key: string;
  let api: ReturnType<typeof projectClient>;

  before(async () => {
    platform = await startPlatform();
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    expect((await admin.putProject("acme", "demo", demoProject())).status).to.equal(201);
    key = await admin.keyWith("acme", "demo", ["Full access"]);
    api = projectClient(platform.baseUrl, "acme", "demo");
  });
  after(() => platform.close());

  for (const format of ["openapi3", "swagger2"] as const) {
    it(`lists, gets, inserts, updates and deletes through the ${format} document`, async () => {
      const docs = await api.get(key, `@docs?format=${format}`);
      expect(docs.status).to.equal(200);
      const resolved = await SwaggerClient.resolve({ spec: docs.body });
      expect(resolved.errors).to.deep.equal([]);
      const { spec } = resolved;
      // Resolving is long and synchronous: let the event loop see the keep-alive connections the
      // server closed meanwhile, before a call picks one of them.
      await new Promise((resolve) => setImmediate(resolve));
      // A call that never answers (a stream where a page was asked for) fails the test, not the run.
      const userFetch = (url: string, init: RequestInit) =>
        fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
      const run = async (operationId: string, parameters: Json = {}, requestBody?: Json): Promise<Answer> => {
        try {
          return await SwaggerClient.execute({
            spec,
            // Resolving normalizes the ids as generated clients name their methods: `list.customer` → `list_customer`.
            operationId: operationId.replace(".", "_"),
            // Swagger 2.0 has the body as a parameter; OpenAPI 3 as the request body.
            parameters:
              format === "swagger2" && requestBody !== undefined
                ? { ...parameters, body: requestBody }
                : parameters,
            requestBody: format === "openapi3" ? requestBody : undefined,
            securities: { authorized: { apiKey: `Tessera ${key}:1` } },
            userFetch,
          });
        } catch (err) {
          const response = (err as { response?: Answer }).response;
          if (response) return response;
          throw err;
        }
      };
      const name = `Generated ${format}`;

      const listed = await run("list.customer", { pagesize: 10 });
      expect(listed.status).to.equal(200);
      // It asked for every type the document lists, text/event-stream too, JSON first: a page.
      expect(listed.headers["content-type"]).to.match(/^application\/json/);
      expect(listed.body).to.be.an("array");

      const inserted = await run("insert.customer", {}, { name, credit_limit: 10 });
      expect(inserted.status, JSON.stringify(inserted.body)).to.equal(201);

      const got = await run("get.customer", { key: name });
      expect(got.status).to.equal(200);
      expect(got.body[0]).to.include({ name, credit_limit: 10 });

      const updated = await run(
        "update.customer",
        { key: name },
        { credit_limit: 20, "@metadata": { checksum: got.body[0]["@metadata"].checksum } },
      );
      expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
      const after = await run("list.customer", { filter: [`name = '${name}'`] });
      expect(after.body.map((c: Json) => c.credit_limit)).to.deep.equal([20]);

      const checksum = after.body[0]["@metadata"].checksum;
      const deleted = await run("delete.customer", { key: name, checksum });
      expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200);
      expect((await run("get.customer", { key: name })).body).to.deep.equal([]);
    });
  }
});
