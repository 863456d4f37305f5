/**
 * Parse Server (bench only), for the `parse-insert` scenario: its `ParseServer`
 * express app mounted at /parse, as its documentation starts it, with GET
 * /readyz for the bench. Parse Server is not a dependency of Tessera: the
 * scenario installs it into a git-ignored folder and names it here.
 *
 * On the embedded store (PARSE_EMBEDDED_STORE=1), stock Parse Server 9 does not
 * start: at start-up it creates indexes with options FerretDB 1.24 refuses
 * (code 238 NotImplemented), the case-insensitive indexes on _User's username
 * and email ("collation") and the TTL index on _Idempotency.expire
 * ("expireAfterSeconds"). Both belong to features the measured create never
 * uses (sign-up/log-in, request idempotency, which is off by default), so the
 * script leaves the first two out with Parse's own options and creates the TTL
 * index as a plain index. Sign-up checks that a username is free with a
 * case-insensitive find (a collation, refused too): on the embedded store that
 * find is case-sensitive (the bench's usernames differ in more than case).
 * Against MONGO_URL Parse runs as shipped.
 *
 * Env: PORT, PARSE_SERVER_DIR (the folder `npm install --prefix` filled),
 * PARSE_DATABASE_URI, PARSE_APP_ID, PARSE_MASTER_KEY, PARSE_REST_KEY, PARSE_EMBEDDED_STORE.
 */
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";

interface ParseServerInstance {
  app: http.RequestListener;
  start(): Promise<unknown>;
  handleShutdown?(): Promise<void>;
}
type ExpressApp = http.RequestListener & {
  use(path: string, handler: unknown): void;
  get(path: string, handler: (req: unknown, res: { json(body: unknown): void }) => void): void;
};
type EnsureIndex = (
  className: string,
  schema: unknown,
  fieldNames: string[],
  indexName?: string,
  caseInsensitive?: boolean,
  options?: { ttl?: number },
) => Promise<unknown>;
type Find = (
  className: string,
  schema: unknown,
  query: unknown,
  options: { caseInsensitive?: boolean },
) => unknown;
type StorageAdapter = { prototype: { ensureIndex: EnsureIndex; find: Find } };

const env = process.env;
const port = Number(env.PORT);
const embedded = env.PARSE_EMBEDDED_STORE === "1";
// No log files in the working directory (Parse's logger reads this when it is loaded).
env.PARSE_SERVER_LOGS_FOLDER = "null";
const required = createRequire(path.join(env.PARSE_SERVER_DIR!, "package.json"));
const { ParseServer } = required("parse-server") as {
  ParseServer: new (options: Record<string, unknown>) => ParseServerInstance;
};
const express = required("express") as () => ExpressApp;

/**
 * Makes Parse's MongoDB adapter create a TTL index as a plain one and find case-sensitively
 * (FerretDB 1.24 has neither TTL indexes nor collations).
 */
function withoutTtlIndexesOrCollations(): void {
  const { default: MongoStorageAdapter } = required(
    "parse-server/lib/Adapters/Storage/Mongo/MongoStorageAdapter.js",
  ) as { default: StorageAdapter };
  const find = MongoStorageAdapter.prototype.find;
  MongoStorageAdapter.prototype.find = function (this: unknown, className, schema, query, options) {
    return find.call(this, className, schema, query, { ...options, caseInsensitive: false });
  };
  const ensureIndex = MongoStorageAdapter.prototype.ensureIndex;
  MongoStorageAdapter.prototype.ensureIndex = function (this: unknown, ...args: Parameters<EnsureIndex>) {
    const [className, schema, fieldNames, indexName, caseInsensitive, options = {}] = args;
    const { ttl: _ttl, ...rest } = options;
    return ensureIndex.call(this, className, schema, fieldNames, indexName, caseInsensitive, rest);
  };
}

if (embedded) withoutTtlIndexesOrCollations();
const parse = new ParseServer({
  databaseURI: env.PARSE_DATABASE_URI,
  ...(embedded && {
    databaseOptions: {
      createIndexUserUsernameCaseInsensitive: false,
      createIndexUserEmailCaseInsensitive: false,
    },
  }),
  appId: env.PARSE_APP_ID,
  masterKey: env.PARSE_MASTER_KEY,
  restAPIKey: env.PARSE_REST_KEY,
  serverURL: `http://127.0.0.1:${port}/parse`,
  logLevel: "error",
  silent: true,
});
await parse.start();
const app = express();
app.get("/readyz", (_req, res) => res.json({ status: "ready" }));
app.use("/parse", parse.app);
const server = http.createServer(app);
server.keepAliveTimeout = 65_000;
server.listen(port, "127.0.0.1");
process.once("SIGTERM", () => {
  server.close(() => {
    void (parse.handleShutdown?.() ?? Promise.resolve()).finally(() => process.exit(0));
  });
  server.closeAllConnections();
});
