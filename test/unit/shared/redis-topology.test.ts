/** Redis topology settings, key layout (one hash slot per multi-key operation) and failover errors. */
import { expect } from "chai";
import { ReplyError } from "ioredis";
import type { Context } from "koa";
import {
  authConfigSchema,
  ConfigError,
  dataConfigSchema,
  parseConfig,
} from "../../../shared/config/config.ts";
import { errorMiddleware } from "../../../shared/http/error-middleware.ts";
import {
  intentIndexKey,
  intentKeyPrefix,
  keyIndexKey,
  keyRecordKey,
  rateLimitBucketKey,
  rateLimitPolicyKey,
  rowLockKey,
  throttleAddressKey,
  throttleSubjectKey,
} from "../../../shared/redis/key-layout.ts";
import { isRedisUnavailable, translateRedisError } from "../../../shared/redis-errors.ts";

const base = { ADMIN_TOKEN: "a", SERVICE_TOKEN: "s" };

/** What decides a key's slot on a Redis Cluster: the first non-empty `{…}`, else the whole key. */
function hashTag(key: string): string {
  const open = key.indexOf("{");
  if (open === -1) return key;
  const close = key.indexOf("}", open + 1);
  return close === -1 || close === open + 1 ? key : key.slice(open + 1, close);
}

describe("Redis topology settings", () => {
  it("single by default, at REDIS_URL", () => {
    const config = parseConfig(authConfigSchema, base);
    expect(config).to.include({
      REDIS_MODE: "single",
      REDIS_URL: "redis://127.0.0.1:6379/",
      REDIS_TLS: false,
    });
  });

  it("sentinel: addresses, master name, passwords and TLS", () => {
    const config = parseConfig(dataConfigSchema, {
      ...base,
      MONGO_URL: "mongodb://db/",
      REDIS_MODE: "sentinel",
      REDIS_SENTINELS: "10.0.0.1:26379, sentinel-2.example:26379,[::1]:26380",
      REDIS_SENTINEL_MASTER: "tessera",
      REDIS_PASSWORD: "p",
      REDIS_SENTINEL_PASSWORD: "sp",
      REDIS_TLS: "true",
    });
    expect(config.REDIS_SENTINELS).to.deep.equal([
      "10.0.0.1:26379",
      "sentinel-2.example:26379",
      "[::1]:26380",
    ]);
    expect(config).to.include({ REDIS_SENTINEL_MASTER: "tessera", REDIS_TLS: true });
  });

  it("refuses a mode without the settings it needs, and addresses that are not host:port (values never echoed)", () => {
    const problems = (env: Record<string, string>) => {
      try {
        parseConfig(authConfigSchema, { ...base, ...env });
        return "";
      } catch (err) {
        expect(err).to.be.instanceOf(ConfigError);
        return (err as Error).message;
      }
    };
    expect(problems({ REDIS_MODE: "sentinel" }))
      .to.match(/REDIS_SENTINELS: required/)
      .and.match(/REDIS_SENTINEL_MASTER: required/);
    expect(problems({ REDIS_MODE: "cluster" })).to.match(
      /REDIS_CLUSTER_NODES: required when REDIS_MODE=cluster/,
    );
    expect(problems({ REDIS_MODE: "cluster", REDIS_CLUSTER_NODES: "node-1:7000,secret-host" }))
      .to.match(/REDIS_CLUSTER_NODES/)
      .and.not.include("secret-host");
    expect(problems({ REDIS_MODE: "replicas" })).to.match(/REDIS_MODE/);
    expect(problems({ REDIS_TLS: "yes" })).to.match(/REDIS_TLS/);
    expect(problems({ REDIS_MODE: "cluster", REDIS_CLUSTER_NODES: "node-1:7000,node-2:7000" })).to.equal("");
  });
});

describe("key layout: every multi-key operation stays in one hash slot", () => {
  const prefix = "tessera:";

  it("row locks, the intent and the intent index of one database share the database's tag", () => {
    const keys = [
      intentIndexKey(prefix, "tn_acme"),
      `${intentKeyPrefix(prefix, "tn_acme")}0123abcd`,
      rowLockKey(prefix, "tn_acme", "p1_customer", JSON.stringify("Alpha {co}")),
      rowLockKey(prefix, "tn_acme", "p2.order", JSON.stringify(7)),
    ];
    expect(new Set(keys.map(hashTag))).to.deep.equal(new Set(["tn_acme"]));
    expect(hashTag(intentIndexKey(prefix, "tn_other"))).to.not.equal("tn_acme");
  });

  it("a key record is tagged by its own hash; the throttle's subject and address each by their own", () => {
    expect(hashTag(keyRecordKey(prefix, "ab12"))).to.equal("ab12");
    expect(hashTag(keyIndexKey(prefix, "acme", "demo"))).to.equal("acme/demo");
    expect(hashTag(throttleSubjectKey(`${prefix}throttle:login:`, "f00d"))).to.equal("f00d");
    expect(hashTag(throttleAddressKey(`${prefix}throttle:login:`, "::1", 7))).to.equal("::1:7");
  });

  it("an account's request rate limits, its bucket and its keys' buckets share the account's tag", () => {
    const keys = [
      rateLimitPolicyKey(prefix, "acme"),
      rateLimitBucketKey(prefix, "acme", "account"),
      rateLimitBucketKey(prefix, "acme", "key:k_1234"),
    ];
    expect(new Set(keys.map(hashTag))).to.deep.equal(new Set(["acme"]));
  });
});

describe("Redis failover errors answer 503 in the documented shape", () => {
  async function answer(err: unknown) {
    const headers: Record<string, string> = {};
    const ctx = {
      state: {},
      path: "/",
      method: "GET",
      set: (h: Record<string, string>) => Object.assign(headers, h),
    } as unknown as Context & { body: Record<string, unknown> };
    await errorMiddleware([translateRedisError])(ctx, async () => {
      throw err;
    });
    return { status: ctx.status, body: ctx.body };
  }

  for (const message of [
    "CLUSTERDOWN The cluster is down",
    "TRYAGAIN Multiple keys request during rehashing of slot",
    "READONLY You can't write against a read only replica.",
    "LOADING Redis is loading the dataset in memory",
    "MASTERDOWN Link with MASTER is down",
  ]) {
    it(message.split(" ")[0]!, async () => {
      const err = new ReplyError(message);
      expect(isRedisUnavailable(err)).to.equal(true);
      const { status, body } = await answer(err);
      expect(status).to.equal(503);
      expect(body).to.include({ statusCode: 503, errorCode: 5031 });
      expect(body.errorMessage).to.be.a("string");
    });
  }

  it("the client giving up on a cluster or the sentinels", async () => {
    const all = Object.assign(new Error("Failed to refresh slots cache."), { name: "ClusterAllFailedError" });
    expect((await answer(all)).status).to.equal(503);
    expect(
      (await answer(new Error("All sentinels are unreachable. Retrying from scratch after 10ms."))).status,
    ).to.equal(503);
  });

  it("other Redis replies stay internal errors", async () => {
    expect(
      isRedisUnavailable(new ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value")),
    ).to.equal(false);
    expect((await answer(new ReplyError("ERR syntax error"))).status).to.equal(500);
  });
});
