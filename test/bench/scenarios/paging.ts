/**
 * Issue: page 500 of a 10,000-row table costs at most 1.5 times page 1
 * (pagesize 20). The page-500 URL is one the server hands out, reached by
 * following next_batch links, so it carries the keyset `pagekey`.
 *
 * Following 499 links one by one takes 499 round trips; where one page costs
 * too much for that (FerretDB on SQLite reads and sorts the whole table for
 * every page: about a second at 10,000 rows), the links are followed with
 * pagesize 4990 (two hops to offset 9980) and the last link's pagesize set
 * back to 20 — the same offset and pagekey that 499 hops give, which the
 * check below verifies against the rows the page returns.
 */
import { authHeaders, ITEMS, itemId, loadItems } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

/** Few connections: the point is the latency of one page, not queueing behind the store. */
const CONNECTIONS = 2;
const PAGESIZE = 20;
const PAGE = 500;
/** Follow every link one by one when that takes less than this. */
const FOLLOW_BUDGET_MS = 30_000;

type WireRow = { id?: string; "@metadata"?: { next_batch?: string } };

function decodePagekey(url: URL): unknown {
  const raw = url.searchParams.get("pagekey");
  return raw === null ? undefined : JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
}

export const paging: Scenario = {
  id: "paging",
  title: `Page 1 vs page ${PAGE} of a ${ITEMS}-row table`,
  describe:
    `GET item?pagesize=${PAGESIZE} (page 1) and the page-${PAGE} URL reached through next_batch links ` +
    "(offset + keyset pagekey), on the data service; the ratio is of the p50 latencies (goal <= 1.5).",
  async run(ctx) {
    const { stack, fixtures } = ctx;
    await ctx.once("items", () => loadItems(stack, fixtures, ctx.log));
    const headers = authHeaders(fixtures);
    const get = async (url: string): Promise<WireRow[]> => {
      const r = await fetch(url, { headers });
      if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${await r.text()}`);
      return (await r.json()) as WireRow[];
    };
    const nextOf = (page: WireRow[]): string => {
      const next = page[page.length - 1]?.["@metadata"]?.next_batch;
      if (!next) throw new Error("a page has no next_batch link");
      return next;
    };
    const first = `${stack.dataUrl}${fixtures.root}/item?pagesize=${PAGESIZE}`;

    await get(first);
    const started = performance.now();
    const page1 = await get(first);
    const pageMs = performance.now() - started;
    const link2 = new URL(nextOf(page1));
    ctx.check(
      "page 1's next_batch carries offset 20 and the keyset position of row 20",
      link2.searchParams.get("offset") === String(PAGESIZE) &&
        JSON.stringify(decodePagekey(link2)) === JSON.stringify([itemId(PAGESIZE)]),
      `${link2.search}`,
    );

    let url: URL;
    let how: string;
    if (pageMs * (PAGE - 1) < FOLLOW_BUDGET_MS) {
      let next = link2.toString();
      for (let n = 2; n < PAGE; n++) next = nextOf(await get(next));
      url = new URL(next);
      how = `followed ${PAGE - 1} links at pagesize ${PAGESIZE}`;
    } else {
      const big = ((PAGE - 1) * PAGESIZE) / 2;
      let next = `${stack.dataUrl}${fixtures.root}/item?pagesize=${big}`;
      for (let hop = 0; hop < 2; hop++) next = nextOf(await get(next));
      url = new URL(next);
      url.searchParams.set("pagesize", String(PAGESIZE));
      how = `one page costs ${pageMs.toFixed(0)} ms: followed 2 links at pagesize ${big}, then pagesize ${PAGESIZE}`;
    }
    const page = await get(url.toString());
    const expectedFirst = itemId((PAGE - 1) * PAGESIZE + 1);
    ctx.check(
      `page ${PAGE} URL carries offset ${(PAGE - 1) * PAGESIZE} and a keyset pagekey, and returns rows from ${expectedFirst}`,
      url.searchParams.get("offset") === String((PAGE - 1) * PAGESIZE) &&
        JSON.stringify(decodePagekey(url)) === JSON.stringify([itemId((PAGE - 1) * PAGESIZE)]) &&
        page[0]?.id === expectedFirst &&
        page.filter((r) => r.id !== undefined).length === PAGESIZE,
      `${how}; ${url.pathname}${url.search} → first row ${page[0]?.id}`,
    );

    await ctx.measure([
      {
        name: "page-1",
        what: `GET item?pagesize=${PAGESIZE}`,
        target: { url: first, headers },
        connections: CONNECTIONS,
      },
      {
        name: `page-${PAGE}`,
        what: `GET the page-${PAGE} next_batch URL (offset + pagekey)`,
        target: { url: url.toString(), headers },
        connections: CONNECTIONS,
        baseline: "page-1",
        compare: "p50",
        goal: { op: "<=", value: 1.5 },
      },
    ]);
  },
};
