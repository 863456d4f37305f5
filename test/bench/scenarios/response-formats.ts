/**
 * What the CSV and XML forms of a page cost over the JSON one (the same 100
 * customers, the same query), and what building the OpenAPI document costs
 * against `@tables`, the other meta endpoint that reads no store.
 */
import { authHeaders } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;
const PAGE = "customer?pagesize=100";

export const responseFormats: Scenario = {
  id: "response-formats",
  title: "CSV and XML pages vs JSON; @docs vs @tables",
  describe:
    `GET ${PAGE} as CSV and as XML vs as JSON, and GET @docs vs GET @tables, on the data service; ` +
    "ratios of requests per second.",
  async run(ctx) {
    const { stack, fixtures } = ctx;
    const headers = authHeaders(fixtures);
    const url = (path: string) => `${stack.dataUrl}${fixtures.root}/${path}`;
    const bodies: Record<string, string> = {};
    for (const format of ["json", "csv", "xml"]) {
      const r = await fetch(url(`${PAGE}&responseformat=${format}`), { headers });
      bodies[format] = await r.text();
      ctx.check(
        `${format} page answers 200`,
        r.status === 200,
        `${r.status} ${r.headers.get("content-type")}`,
      );
    }
    ctx.check(
      "the CSV page has a header row and 100 records",
      bodies.csv!.split("\r\n").filter(Boolean).length === 101,
      `${bodies.csv!.length} bytes of CSV, ${bodies.xml!.length} of XML, ${bodies.json!.length} of JSON`,
    );
    const docs = await fetch(url("@docs"), { headers });
    ctx.check("@docs answers 200", docs.status === 200, `${(await docs.text()).length} bytes`);

    const row = (name: string, path: string, baseline?: string) => ({
      name,
      what: `GET ${path}`,
      target: { url: url(path), headers },
      connections: CONNECTIONS,
      ...(baseline ? { baseline, compare: "rps" as const } : {}),
    });
    await ctx.measure([
      row("json", `${PAGE}`),
      row("csv", `${PAGE}&responseformat=csv`, "json"),
      row("xml", `${PAGE}&responseformat=xml`, "json"),
      row("tables", "@tables"),
      row("docs", "@docs", "tables"),
    ]);
  },
};
