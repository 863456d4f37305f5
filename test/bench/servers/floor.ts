/**
 * The floor server (bench only): bare Koa routes doing the store work of a
 * data-service request and nothing else, so that the data service can be
 * compared with the least any server could do for the same answer.
 *
 *   GET  /floor/find/:name        one Redis read of the key record (the same
 *                                  HGETALL that key validation sends, through
 *                                  the shared KeyStore), then the MongoDB find
 *                                  the data service sends for that request
 *                                  (captured by the probe), rows as JSON
 *   GET  /floor/find-nokey/:name  the same find without the Redis read
 *   POST /floor/argon2            argon2id verification of {"password"} with the
 *                                  production parameters (no store at all)
 *   POST /floor/insert[/:table]   one insertOne of {"id", "order_number"} as a row
 *                                  (with `_id` and checksum `_ck`), as a plain POST;
 *                                  table `grown` holds 10,000 rows from the start,
 *                                  `fresh0`…`fresh19` start empty (insert-growth)
 *   POST /floor/cascade           the MongoDB commands of a line item whose rules
 *                                  update its order and the order's customer: find
 *                                  the order and the customer by `_id`, insert the
 *                                  line item, replace both parents guarded by their
 *                                  checksum ({_id, _ck}) — no Redis, no rules
 *
 * Env: PORT, MONGO_URL, REDIS_URL, REDIS_PREFIX, AUTH_SCHEMES?, ARGON2_MEMORY_KIB,
 * FLOOR_QUERIES (JSON object: name → EJSON of a CapturedFind), FLOOR_PASSWORD, META_DB
 * (the floor's rows go to the database META_DB + "_floor", which starts with the bench's prefix).
 */
import http from "node:http";
import Router from "@koa/router";
import { Redis } from "ioredis";
import Koa from "koa";
import mongoose from "mongoose";
import { createPasswordHasher } from "../../../services/data/src/credentials/passwords.ts";
import { hashKey } from "../../../shared/key-format.ts";
import { KeyStore } from "../../../shared/keys/key-store.ts";
import { readKey } from "../../../shared/keys/key-transport.ts";
import { parseCapturedFind } from "../lib/probe.ts";

const env = process.env;
const schemes = (env.AUTH_SCHEMES ?? "Tessera,CALiveAPICreator,Espresso").split(",");
const redis = new Redis(env.REDIS_URL!, { maxRetriesPerRequest: 2 });
const keys = new KeyStore(redis, env.REDIS_PREFIX!, 0);
const connection = await mongoose
  .createConnection(env.MONGO_URL!, { serverSelectionTimeoutMS: 5000, autoIndex: false })
  .asPromise();
const client = connection.getClient();
const queries = new Map(
  Object.entries(JSON.parse(env.FLOOR_QUERIES ?? "{}") as Record<string, string>).map(([name, text]) => {
    const q = parseCapturedFind(text);
    const options = Object.fromEntries(
      Object.entries(q.options).filter(([, v]) => v !== undefined && v !== null),
    );
    return [name, { collection: client.db(q.db).collection(q.collection), filter: q.filter, options }];
  }),
);
const hasher = createPasswordHasher(Number(env.ARGON2_MEMORY_KIB ?? 19_456));
const passwordHash = await hasher.hash(env.FLOOR_PASSWORD ?? "floor-password");

const router = new Router();
router.get("/readyz", async (ctx) => {
  await redis.ping();
  ctx.body = { status: "ready" };
});
const find = async (ctx: Koa.Context, withKey: boolean) => {
  const query = queries.get(ctx.params.name ?? "");
  if (!query) ctx.throw(404);
  if (withKey) {
    const key = readKey(
      { method: ctx.method, authorization: ctx.get("authorization") || undefined, authParams: [] },
      schemes,
    );
    const record = key === undefined ? null : await keys.get(hashKey(key));
    if (!record) ctx.throw(401);
  }
  ctx.body = await query.collection.find(query.filter as mongoose.mongo.Document, query.options).toArray();
};
router.get("/floor/find/:name", (ctx) => find(ctx, true));
router.get("/floor/find-nokey/:name", (ctx) => find(ctx, false));
router.post("/floor/argon2", async (ctx) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  const { password } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { password?: string };
  const ok = typeof password === "string" && (await hasher.verify(passwordHash, password));
  ctx.status = ok ? 200 : 401;
  ctx.body = { ok };
});

const FLOOR_ORDERS = 100;
const floorDb = client.db(`${env.META_DB}_floor`);
const floorRows = {
  lineitem: floorDb.collection<FloorRow>("lineitem"),
  order: floorDb.collection<FloorRow>("order"),
  customer: floorDb.collection<FloorRow>("customer"),
};
type FloorRow = { _id: string | number; _ck: string; [column: string]: unknown };
const checksum = () => Math.random().toString(16).slice(2, 18);
await floorRows.customer.insertMany(
  Array.from({ length: FLOOR_ORDERS }, (_, i) => ({ _id: `fc${i + 1}`, _ck: checksum(), balance: 0 })),
);
await floorRows.order.insertMany(
  Array.from({ length: FLOOR_ORDERS }, (_, i) => ({
    _id: i + 1,
    _ck: checksum(),
    customer_name: `fc${i + 1}`,
    amount_total: 0,
  })),
);
/** The row a POST of the bench writes: the line item's columns, with `_id` and checksum `_ck`. */
const lineRow = (id: string, order_number: number): FloorRow => ({
  _id: id,
  _ck: checksum(),
  id,
  order_number,
  qty: 2,
  price: 1.5,
  amount: 3,
});
const readBody = async (ctx: Koa.Context) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string; order_number: number };
};
const GROWN_ROWS = 10_000;
const insertTables = new Set(["plain", "grown", ...Array.from({ length: 20 }, (_, i) => `fresh${i}`)]);
for (let i = 0; i < GROWN_ROWS; i += 1000) {
  await floorDb
    .collection<FloorRow>("grown")
    .insertMany(Array.from({ length: 1000 }, (_, j) => lineRow(`pre${i + j}`, i + j)));
}
const insert = async (ctx: Koa.Context, table: string) => {
  if (!insertTables.has(table)) ctx.throw(404);
  const { id, order_number } = await readBody(ctx);
  await floorDb.collection<FloorRow>(table).insertOne(lineRow(id, order_number));
  ctx.status = 201;
  ctx.body = { statusCode: 201 };
};
router.post("/floor/insert", (ctx) => insert(ctx, "plain"));
router.post("/floor/insert/:table", (ctx) => insert(ctx, ctx.params.table ?? ""));
/**
 * Adds `amount` to `column` of `row` with a replace guarded by its checksum, in the order the unit
 * of work applies writes; when the guard matches nothing (a concurrent writer) the row is read
 * again and the add retried, as the data service plans again.
 */
async function guardedAdd(rows: typeof floorRows.order, row: FloorRow, column: string, amount: number) {
  let current: FloorRow | null = row;
  for (let attempt = 1; current && attempt <= 5; attempt++) {
    const after = { ...current, [column]: (current[column] as number) + amount, _ck: checksum() };
    const r = await rows.replaceOne({ _id: current._id, _ck: current._ck }, after);
    if (r.matchedCount === 1) return true;
    current = await rows.findOne({ _id: current._id });
  }
  return false;
}

router.post("/floor/cascade", async (ctx) => {
  const { id, order_number } = await readBody(ctx);
  const order = await floorRows.order.findOne({ _id: (order_number % FLOOR_ORDERS) + 1 });
  const customer = order && (await floorRows.customer.findOne({ _id: order.customer_name as string }));
  let ok = false;
  if (order && customer) {
    await floorRows.lineitem.insertOne(lineRow(id, order_number));
    ok =
      (await guardedAdd(floorRows.order, order, "amount_total", 3)) &&
      (await guardedAdd(floorRows.customer, customer, "balance", 3));
  }
  ctx.status = ok ? 201 : 409;
  ctx.body = { statusCode: ctx.status };
});

const app = new Koa();
app.use(router.routes()).use(router.allowedMethods());
const server = http.createServer(app.callback());
server.keepAliveTimeout = 65_000;
server.listen(Number(env.PORT), "127.0.0.1");
process.once("SIGTERM", () => {
  server.close(() => {
    redis.disconnect();
    void connection.close().then(() => process.exit(0));
  });
  server.closeAllConnections();
});
