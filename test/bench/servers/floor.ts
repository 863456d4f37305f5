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
 *
 * Env: PORT, MONGO_URL, REDIS_URL, REDIS_PREFIX, AUTH_SCHEMES?, ARGON2_MEMORY_KIB,
 * FLOOR_QUERIES (JSON object: name → EJSON of a CapturedFind), FLOOR_PASSWORD.
 */
import http from "node:http";
import Router from "@koa/router";
import { Redis } from "ioredis";
import Koa from "koa";
import mongoose from "mongoose";
import { createPasswordHasher } from "../../../services/data/src/auth/passwords.ts";
import { hashKey } from "../../../shared/keys/key-format.ts";
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
