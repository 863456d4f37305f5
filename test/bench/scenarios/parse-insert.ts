/**
 * One-row insert against the closest peer: Tessera's POST of one row (no rules,
 * a project of its own) against Parse Server's one-object create
 * (`POST /parse/classes/<Class>` with its app id and REST key), both on the
 * bench's store (Parse in a database of its own), same connections, in one run.
 * Tessera is measured at the data service itself, which validates the key as
 * Parse does in its one process (the edge hop is not part of either); a row of its own
 * measures the same insert through the base URL, the edge in front.
 *
 * Parse Server is installed and started by lib/parse-peer.ts (not a dependency
 * of Tessera); when it cannot be installed or cannot run on the store, the
 * scenario is reported as pending with the reason.
 */
import { keyHeader } from "../../support/http.ts";
import { benchProject, oneTableProject } from "../lib/fixtures.ts";
import { PARSE_CLASS, startParsePeer } from "../lib/parse-peer.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;
const PROJECT = "parsepeer";

export const parseInsert: Scenario = {
  id: "parse-insert",
  title: "One-row insert: Tessera vs Parse Server on the same store",
  describe:
    "POST one row (no rules, a project of its own) to the data service against Parse Server 9's one-object " +
    "create (POST /parse/classes/Item with app id and REST key) on the same store (a database of its own), " +
    `${CONNECTIONS} connections each.`,
  async run(ctx) {
    const { stack } = ctx;
    const parse = await startParsePeer(ctx, "parse");
    if (typeof parse === "string") return ctx.pending(parse);
    try {
      const { key, client } = await benchProject(stack, PROJECT, oneTableProject("item"));
      let written = 0;
      const tessera = (summary: boolean, base = stack.dataUrl) => ({
        url: `${base}${client.root}/item`,
        method: "POST" as const,
        headers: keyHeader(key),
        next: () => {
          const n = ++written;
          return {
            path: `${client.root}/item${summary ? "" : "?txsummary=false"}`,
            body: JSON.stringify({ id: `r${n}`, name: `row ${n}`, qty: n % 7 }),
          };
        },
      });
      let created = 0;
      await ctx.measure([
        {
          name: "parse",
          what: `Parse Server ${parse.version}: POST /parse/classes/${PARSE_CLASS}, one object (app id + REST key)`,
          target: {
            url: `${parse.url}/parse/classes/${PARSE_CLASS}`,
            method: "POST",
            headers: parse.headers,
            next: () => {
              const n = ++created;
              return { body: JSON.stringify({ name: `row ${n}`, qty: n % 7 }) };
            },
          },
          connections: CONNECTIONS,
        },
        {
          name: "tessera",
          what: "Tessera: POST one row, no rules (answer: the transaction summary)",
          target: tessera(true),
          connections: CONNECTIONS,
          baseline: "parse",
          goal: { op: ">=", value: 1.0 },
        },
        {
          name: "tessera-base-url",
          what: "Tessera through the base URL (the edge in front): POST one row, no rules",
          target: tessera(true, stack.baseUrl),
          connections: CONNECTIONS,
          baseline: "parse",
          goal: { op: ">=", value: 1.0 },
        },
        {
          name: "tessera-nosummary",
          what: "Tessera: POST one row, no rules, ?txsummary=false (answer: status only)",
          target: tessera(false),
          connections: CONNECTIONS,
          baseline: "parse",
        },
      ]);
      ctx.log(`${written} rows posted to Tessera, ${created} objects to Parse while measuring`);
    } finally {
      // The other scenarios of the run get the cores back.
      await parse.stop();
    }
  },
};
