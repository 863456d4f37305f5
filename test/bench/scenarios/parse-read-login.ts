/**
 * GET by key and login against the closest peer, both through Tessera's base URL (the edge in
 * front, as clients see it): Tessera's GET of one row by its key against Parse Server's GET of one
 * object by its id (`GET /parse/classes/<Class>/<objectId>`, app id and REST key), each rotating over
 * ROWS rows of the same shape; Tessera's login of a built-in user (argon2id, a new key in Redis)
 * against Parse's `POST /parse/login` (bcrypt, a new session object in the store), each rotating over
 * the same 20 users. Both on the bench's store (Parse in a database of its own), in one run.
 * Parse Server is installed and started by lib/parse-peer.ts; when it cannot be, the scenario is
 * reported as pending with the reason.
 */
import { keyHeader } from "../../support/http.ts";
import {
  benchProject,
  expectStatus,
  LOGIN_USERS,
  oneTableProject,
  PASSWORD,
  rotatingLogins,
} from "../lib/fixtures.ts";
import { PARSE_CLASS, parseRequest, startParsePeer } from "../lib/parse-peer.ts";
import type { Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;
const PROJECT = "parseread";
/** Rows each side reads in turn (a working set both keep in memory). */
const ROWS = 100;

/** A `next` for load targets: each request reads the next of `paths`. */
function rotating(paths: string[]): () => { path: string } {
  let n = 0;
  return () => ({ path: paths[n++ % paths.length] as string });
}

export const parseReadLogin: Scenario = {
  id: "parse-read-login",
  title: "GET by key and login: Tessera vs Parse Server, through the base URL",
  describe:
    `GET one row by key (Tessera, through the edge) against Parse Server 9's GET of one object by id, over ${ROWS} ` +
    "rows each; login of a built-in user (argon2id, new key) against Parse's POST /parse/login (bcrypt, new " +
    `session), over 20 users each; ${CONNECTIONS} connections, the same store.`,
  async run(ctx) {
    const { stack, fixtures } = ctx;
    const parse = await startParsePeer(ctx, "parseread");
    if (typeof parse === "string") return ctx.pending(parse);
    try {
      const objectPaths: string[] = [];
      for (let n = 1; n <= ROWS; n++) {
        const created = await parseRequest(parse, "POST", `/classes/${PARSE_CLASS}`, {
          body: { name: `row ${n}`, qty: n % 7 },
        });
        const objectId = (created.body as { objectId?: unknown }).objectId;
        if (created.status !== 201 || typeof objectId !== "string")
          return ctx.pending(
            `Parse Server could not create object ${n}: ${created.status} ${JSON.stringify(created.body)}`,
          );
        objectPaths.push(`/parse/classes/${PARSE_CLASS}/${objectId}`);
      }
      for (const username of LOGIN_USERS) {
        const signUp = await parseRequest(parse, "POST", "/users", {
          body: { username, password: PASSWORD },
        });
        if (signUp.status !== 201)
          return ctx.pending(
            `Parse Server could not sign up ${username}: ${signUp.status} ${JSON.stringify(signUp.body)}`,
          );
      }

      const { key, client } = await benchProject(stack, PROJECT, oneTableProject("item"));
      const rows = Array.from({ length: ROWS }, (_, i) => ({
        id: `r${i + 1}`,
        name: `row ${i + 1}`,
        qty: (i + 1) % 7,
      }));
      expectStatus(await client.post(key, "item?txsummary=false", rows), 201, `POST ${ROWS} rows`);
      const rowPaths = rows.map((row) => `${client.root}/item/${row.id}`);

      await ctx.measure([
        {
          name: "parse-get",
          what: `Parse Server ${parse.version}: GET /parse/classes/${PARSE_CLASS}/<objectId> (app id + REST key), over ${ROWS} objects`,
          target: { url: parse.url, headers: parse.headers, next: rotating(objectPaths) },
          connections: CONNECTIONS,
        },
        {
          name: "tessera-get",
          what: `Tessera through the base URL: GET one row by key, over ${ROWS} rows`,
          target: { url: stack.baseUrl, headers: keyHeader(key), next: rotating(rowPaths) },
          connections: CONNECTIONS,
          baseline: "parse-get",
        },
        {
          name: "parse-login",
          what: `Parse Server ${parse.version}: POST /parse/login (bcrypt; a new session), over ${LOGIN_USERS.length} users`,
          target: {
            url: `${parse.url}/parse/login`,
            method: "POST",
            headers: parse.headers,
            next: rotatingLogins(),
          },
          connections: CONNECTIONS,
        },
        {
          name: "tessera-login",
          what: `Tessera through the base URL: POST @authentication (argon2id; a new key), over ${LOGIN_USERS.length} users`,
          target: {
            url: `${stack.baseUrl}${fixtures.root}/@authentication`,
            method: "POST",
            next: rotatingLogins(),
          },
          connections: CONNECTIONS,
          baseline: "parse-login",
        },
      ]);
    } finally {
      await parse.stop();
    }
  },
};
