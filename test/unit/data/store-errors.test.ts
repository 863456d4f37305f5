/**
 * Store errors in the service's own terms: the translators the error middleware
 * is given (store/mongo-errors.ts, shared/redis-errors.ts) and the answer a
 * request gets through the middleware; the port's adapter translates before
 * its errors leave the store.
 */
import { expect } from "chai";
import { Redis } from "ioredis";
import Koa from "koa";
import { MongoClient } from "mongodb";
import { translateMongoError } from "../../../services/data/src/store/mongo-errors.ts";
import { TenantDatabases } from "../../../services/data/src/store/tenant-databases.ts";
import { TenantStore } from "../../../services/data/src/store/tenant-store.ts";
import { ApiError } from "../../../shared/errors.ts";
import { errorMiddleware } from "../../../shared/http/error-middleware.ts";
import { translateRedisError } from "../../../shared/redis-errors.ts";

function named(name: string, message = "boom"): Error {
  const err = new Error(message);
  err.name = name;
  return err;
}

async function answer(err: unknown, translators = [translateMongoError, translateRedisError]) {
  const app = new Koa();
  app.use(errorMiddleware(translators));
  app.use(() => {
    throw err;
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  try {
    const { port } = server.address() as { port: number };
    const r = await fetch(`http://127.0.0.1:${port}/`);
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  } finally {
    server.close();
  }
}

describe("store errors", () => {
  it("a MongoDB that cannot be reached is 503/5031", () => {
    for (const name of ["MongoNetworkError", "MongoServerSelectionError", "MongooseServerSelectionError"]) {
      expect(translateMongoError(named(name))?.statusCode, name).to.equal(503);
    }
    expect(
      translateMongoError(named("MongooseError", "Operation buffering timed out after 10000ms")),
    ).to.include({
      errorCode: 5031,
    });
  });
  it("a query stopped at its time limit is 503/5031, saying so", async () => {
    const expired = Object.assign(named("MongoServerError", "operation exceeded time limit"), {
      code: 50,
      codeName: "MaxTimeMSExpired",
    });
    const r = await answer(expired);
    expect(r.status).to.equal(503);
    expect(r.body.errorCode).to.equal(5031);
    expect(r.body.errorMessage).to.match(/took longer than its time limit; nothing was written/);
    expect(translateMongoError(Object.assign(named("MongoServerError"), { code: 11000 }))).to.equal(
      undefined,
    );
  });
  it("a Redis that cannot be reached is 503/5031", () => {
    expect(translateRedisError(named("MaxRetriesPerRequestError"))?.statusCode).to.equal(503);
    expect(translateRedisError(new Error("Connection is closed."))?.statusCode).to.equal(503);
  });
  it("other errors are left to the middleware (500 without internals)", async () => {
    expect(translateMongoError(named("MongoServerError"))).to.equal(undefined);
    expect(translateRedisError(named("ReplyError"))).to.equal(undefined);
    const r = await answer(named("MongoServerError", "secret detail"));
    expect(r.status).to.equal(500);
    expect(JSON.stringify(r.body)).not.to.contain("secret");
  });
  it("the middleware answers with the translator's error, and without translators a driver error is 500", async () => {
    const translated = await answer(named("MongoNetworkError"));
    expect(translated.status).to.equal(503);
    expect(translated.body).to.include({ statusCode: 503, errorCode: 5031 });
    expect((await answer(named("MongoNetworkError"), [])).status).to.equal(500);
  });
  it("the port's adapter answers a store that is away in the service's terms (503/5031), not the driver's", async () => {
    // Nothing listens on port 1: server selection fails, as with a MongoDB that is down.
    const redis = new Redis({ lazyConnect: true });
    const storage = { database: "tn_acme", collectionPrefix: "p." };
    try {
      for (const read of [
        (store: TenantStore) => store.find(storage, "customer", { op: "all" }),
        (store: TenantStore) => store.exists(storage, "customer", { op: "id", id: 1 }),
        (store: TenantStore) => store.get(storage, "customer", 1),
      ]) {
        const client = new MongoClient("mongodb://127.0.0.1:1/", { serverSelectionTimeoutMS: 50 });
        const err = await read(new TenantStore(new TenantDatabases(client, 1000), redis, "t:")).then(
          () => undefined,
          (e: unknown) => e,
        );
        await client.close();
        expect(err).to.be.instanceOf(ApiError);
        expect(err).to.include({ statusCode: 503, errorCode: 5031 });
      }
    } finally {
      redis.disconnect();
    }
  });
});
