/**
 * What the JavaScript of API versions costs, in a project of its own (so that
 * its events touch no other scenario): a JavaScript resource that reads one
 * page through the read API (`tessera.get`) and answers it, vs the same GET of
 * the table; and a GET with a trivial response event (it returns nothing, so
 * the answer does not travel back), and one with an event that reshapes every
 * object, vs the GET without events. Each under load (requests per second, 10
 * connections) and one request at a time (p50 latency), since under load the
 * store's queue can hide the sandbox's cost.
 */
import { adminClient, keyHeader, projectClient } from "../../support/http.ts";
import { ACCOUNT, expectStatus } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;
const PROJECT = "scripts";
const CUSTOMERS = 100;
const PAGE = 20;

function scriptsProject() {
  const customer = {
    key: ["name"],
    columns: {
      name: { type: "string", required: true },
      balance: { type: "number", default: 0 },
      region: { type: "string" },
    },
  };
  return {
    tables: { customer },
    apiVersions: {
      // v1: no events; the table and a JavaScript resource answering the same page.
      v1: {
        resources: {
          Page: {
            type: "javascript",
            code: "return (await tessera.get('customer', { pagesize: request.pagesize })).rows;",
          },
        },
      },
      // v2: the table with a response event that changes nothing.
      v2: {
        resources: {},
        events: [{ type: "response", code: "if (response.statusCode === 0) return [];" }],
      },
      // v3: the table with a response event that reshapes every object.
      v3: {
        resources: {},
        events: [
          {
            type: "response",
            code: "return response.body.map((c) => ({ ...c, label: String(c.name).toUpperCase() }));",
          },
        ],
      },
    },
    roles: { "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
  };
}

export const scripts: Scenario = {
  id: "scripts",
  title: "JavaScript resource vs the table; GET with response events vs without",
  describe:
    `GET of a JavaScript resource that reads one page of ${PAGE} customers with tessera.get and answers it, ` +
    `vs GET customer?pagesize=${PAGE}; the same GET with a trivial response event, and with one that ` +
    "reshapes every object, vs without events. On the data service; ratios of requests per second.",
  async run(ctx) {
    const { stack } = ctx;
    const admin = adminClient(stack.baseUrl, stack.adminToken);
    const put = await admin.putProject(ACCOUNT, PROJECT, scriptsProject());
    if (put.status !== 201 && put.status !== 200)
      return ctx.pending(`the project with JavaScript is refused: ${JSON.stringify(put.body)}`);
    const created = await admin.createKey(ACCOUNT, PROJECT, { name: "bench", roles: ["Full access"] });
    expectStatus(created, 201, "POST apikeys (scripts project)");
    const key = created.body.apikey as string;
    const client = projectClient(stack.baseUrl, ACCOUNT, PROJECT);
    const customers = Array.from({ length: CUSTOMERS }, (_, i) => ({
      name: `s${String(i).padStart(4, "0")}`,
      balance: i,
      region: i % 2 ? "east" : "west",
    }));
    expectStatus(await client.post(key, "customer?txsummary=false", customers), 201, "POST customers");
    const headers = keyHeader(key);
    const url = (version: string, path: string) =>
      `${stack.dataUrl}/rest/${ACCOUNT}/${PROJECT}/${version}/${path}`;
    const table = `customer?pagesize=${PAGE}&nometa=true`;
    const page = (await fetch(url("v1", table), { headers }).then((r) => r.json())) as { name: string }[];
    const computed = await fetch(url("v1", `Page?pagesize=${PAGE}`), { headers });
    const answer = (await computed.json()) as { name: string }[];
    ctx.check(
      "the JavaScript resource answers the table's page",
      computed.status === 200 && answer.length === PAGE && answer[0]?.name === page[0]?.name,
      `${computed.status}, ${Array.isArray(answer) ? answer.length : JSON.stringify(answer)} objects`,
    );
    const reshaped = await fetch(url("v3", table), { headers });
    const reshapedBody = (await reshaped.json()) as { label?: string }[];
    ctx.check(
      "the reshaping event runs",
      reshaped.status === 200 && reshapedBody[0]?.label === page[0]?.name.toUpperCase(),
      `${reshaped.status}`,
    );

    // Under load (req/s, 10 connections), and one request at a time (p50: the store's queueing aside).
    const rows = (suffix: string, connections: number, compare: "rps" | "p50") => {
      const row = (name: string, version: string, path: string, what: string, baseline?: string) => ({
        name: `${name}${suffix}`,
        what,
        target: { url: url(version, path), headers },
        connections,
        ...(baseline ? { baseline: `${baseline}${suffix}`, compare } : {}),
      });
      return [
        row("table", "v1", table, `GET ${table}`),
        row(
          "javascript",
          "v1",
          `Page?pagesize=${PAGE}`,
          "a JavaScript resource reading the same page",
          "table",
        ),
        row("trivial-event", "v2", table, "the same GET, a response event that changes nothing", "table"),
        row("reshaping-event", "v3", table, "the same GET, a response event reshaping every object", "table"),
      ];
    };
    await ctx.measure([...rows("", CONNECTIONS, "rps"), ...rows("-1", 1, "p50")]);
  },
};
