/**
 * One-row insert against the closest peer: Tessera's POST of one row (no rules,
 * a project of its own) against Parse Server's one-object create
 * (`POST /parse/classes/<Class>` with its app id and REST key), both on the
 * bench's store (Parse in a database of its own), same connections, in one run.
 * Tessera is measured at the data service itself, which validates the key as
 * Parse does in its one process (the edge hop is not part of either); a row of its own
 * measures the same insert through the base URL, the edge in front.
 *
 * Parse Server is not a dependency of Tessera: the first run installs
 * `parse-server@9` with npm into `.bench-tools/parse-server` (git-ignored), and
 * test/bench/servers/parse.ts starts it as a process of its own on loopback.
 * When it cannot be installed or cannot run on the store, the scenario is
 * reported as pending with the reason.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { keyHeader } from "../../support/http.ts";
import { benchProject, oneTableProject } from "../lib/fixtures.ts";
import type { NodeChild } from "../lib/processes.ts";
import { repoRoot } from "../lib/stack.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;
const PROJECT = "parsepeer";
const PARSE_VERSION = "9";
const PARSE_DIR = path.join(repoRoot, ".bench-tools", "parse-server");
const APP_ID = "tessera-bench";
const CLASS = "Item";

/** Installs parse-server into PARSE_DIR unless it is there; the reason when it cannot. */
async function installParse(log: (line: string) => void): Promise<string | undefined> {
  if (existsSync(path.join(PARSE_DIR, "node_modules", "parse-server", "package.json"))) return undefined;
  log(`installing parse-server@${PARSE_VERSION} into ${path.relative(repoRoot, PARSE_DIR)} (first run only)`);
  const args = ["install", "--prefix", PARSE_DIR, "--no-save", "--no-audit", "--no-fund"];
  const npm = spawn("npm", [...args, `parse-server@${PARSE_VERSION}`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  npm.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-2000);
  });
  const code = await new Promise<number | null>((resolve) => {
    npm.once("error", () => resolve(null));
    npm.once("exit", resolve);
  });
  return code === 0 ? undefined : `npm could not install parse-server@${PARSE_VERSION}: ${stderr.trim()}`;
}

/** `url` with its database name replaced by `database` (hosts and options kept). */
function withDatabase(url: string, database: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]*)(?:\/[^?]*)?(\?.*)?$/.exec(url);
  if (!match) throw new Error("MONGO_URL is not a mongodb:// URL");
  return `${match[1]}/${database}${match[2] ?? ""}`;
}

export const parseInsert: Scenario = {
  id: "parse-insert",
  title: "One-row insert: Tessera vs Parse Server on the same store",
  describe:
    "POST one row (no rules, a project of its own) to the data service against Parse Server 9's one-object " +
    "create (POST /parse/classes/Item with app id and REST key) on the same store (a database of its own), " +
    `${CONNECTIONS} connections each.`,
  async run(ctx) {
    const { stack } = ctx;
    const notInstalled = await installParse(ctx.log);
    if (notInstalled) return ctx.pending(notInstalled);
    const { key, client } = await benchProject(stack, PROJECT, oneTableProject("item"));
    const restKey = randomBytes(18).toString("base64url");
    const masterKey = randomBytes(18).toString("base64url");
    let parse: NodeChild;
    try {
      parse = await stack.startServer("parse server", "test/bench/servers/parse.ts", {
        ...process.env,
        PARSE_SERVER_DIR: PARSE_DIR,
        PARSE_DATABASE_URI: withDatabase(stack.mongoUrl, `${stack.dataEnv.TENANT_DB_PREFIX}parse`),
        PARSE_APP_ID: APP_ID,
        PARSE_MASTER_KEY: masterKey,
        PARSE_REST_KEY: restKey,
        PARSE_EMBEDDED_STORE: process.env.MONGO_URL ? "0" : "1",
      });
    } catch (err) {
      return ctx.pending(`Parse Server did not start on this store (its error is in the log above): ${err}`);
    }
    try {
      const parseHeaders = { "X-Parse-Application-Id": APP_ID, "X-Parse-REST-API-Key": restKey };
      // The class exists before the load (clients may not create classes; the master key may).
      const schema = await fetch(`${parse.url}/parse/schemas/${CLASS}`, {
        method: "POST",
        headers: {
          "X-Parse-Application-Id": APP_ID,
          "X-Parse-Master-Key": masterKey,
          "content-type": "application/json",
        },
        body: JSON.stringify({
          className: CLASS,
          fields: { name: { type: "String" }, qty: { type: "Number" } },
        }),
      });
      const first = await fetch(`${parse.url}/parse/classes/${CLASS}`, {
        method: "POST",
        headers: { ...parseHeaders, "content-type": "application/json" },
        body: JSON.stringify({ name: "first", qty: 1 }),
      });
      if (first.status !== 201) {
        const reason = `schema ${schema.status} ${await schema.text()}; create ${first.status} ${await first.text()}`;
        return ctx.pending(`Parse Server started but cannot create an object on this store: ${reason}`);
      }
      await first.body?.cancel();
      await schema.body?.cancel();

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
          what: `Parse Server ${PARSE_VERSION}: POST /parse/classes/${CLASS}, one object (app id + REST key)`,
          target: {
            url: `${parse.url}/parse/classes/${CLASS}`,
            method: "POST",
            headers: parseHeaders,
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
