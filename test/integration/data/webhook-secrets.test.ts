/**
 * Webhook signing secrets at rest (store/secret-box.ts, docs/webhooks.md): sealed in Redis under
 * SECRETS_KEY, never stored as they are; sealed again under a new key the operator puts in front
 * (and a secret stored before there was a key), so the old key can be retired; a process without
 * the sealing key sends nothing and says why in the delivery log, and the event goes out once a
 * process with the key retries it. Real data-service processes deliver.
 */
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { verifyWebhook } from "../../../services/data/src/hooks/signature.ts";
import { SecretBox } from "../../../services/data/src/store/secret-box.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { type DataProcess, dataServiceEnv, startDataProcess } from "../../support/data-process.ts";
import { startPlatform } from "../../support/platform.ts";
import { keysMatching, testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";
import {
  type ReceivedDelivery,
  type Receiver,
  startReceiver,
  WEBHOOK_TEST_SETTINGS,
} from "../../support/webhook-receiver.ts";
import { type CanonicalSetup, canonicalProject, type Row, setupProject } from "../rules/support.ts";

const HOOKS = "/accounts/acme/projects/shop/webhooks";
const newKey = () => randomBytes(32).toString("base64");
/** The id a stored secret names for the key that sealed it ("" for one kept as it is). */
const sealedWith = (stored: string) => (stored.startsWith("tsealed1:") ? stored.split(":")[1]! : "");
const signedBy = (d: ReceivedDelivery, secret: string) =>
  verifyWebhook(secret, d.id, d.timestamp, JSON.stringify(d.body), d.signature);
const idOf = (key: string) => sealedWith(new SecretBox([Buffer.from(key, "base64")]).seal("x"));

describe("webhook secrets at rest", function () {
  this.timeout(180_000);
  const keyA = newKey();
  const keyB = newKey();
  let s: CanonicalSetup;
  let r: Receiver;
  let redis: RedisClient;
  let hooksKey: string;
  /** The product subscription's secret after its rotation. */
  let second: string;
  const running: DataProcess[] = [];
  /** A delivering data process with these SECRETS_KEY keys; the in-process service delivers nothing. */
  const deliverer = async (keys: string) => {
    const p = await startDataProcess({
      ...dataServiceEnv(s.platform.dataConfig),
      SECRETS_KEY: keys,
      WEBHOOK_DELIVERY: "true",
    });
    running.push(p);
    return p;
  };
  const stopAll = async () => {
    for (const p of running.splice(0)) await p.cleanup();
  };
  const stored = async (id: string) => JSON.parse((await redis.hget(hooksKey, id))!) as Row;
  const log = async (id: string) =>
    (await s.admin.send("GET", `${HOOKS}/${id}/deliveries?pagesize=100`)).body as Row[];

  before(async () => {
    const platform = await startPlatform({
      ...WEBHOOK_TEST_SETTINGS,
      SECRETS_KEY: keyA,
      WEBHOOK_DELIVERY: "false",
      WEBHOOK_BACKOFF_BASE_MS: "50",
      WEBHOOK_BACKOFF_CAP_MS: "200",
    });
    s = await setupProject(canonicalProject(), { platform });
    r = await startReceiver();
    redis = await testRedisClient();
  });
  after(async () => {
    await stopAll();
    await r?.close();
    redis?.disconnect();
    await s?.platform.close();
  });

  it("keeps secrets sealed; a new key in front seals them again, a secret stored as it was included", async () => {
    const created = await s.admin.send("POST", HOOKS, { url: r.url, tables: ["product"], verbs: ["INSERT"] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const { id, secret } = created.body as { id: string; secret: string };
    [hooksKey] = (await keysMatching(redis, `${s.platform.dataConfig.REDIS_PREFIX}hooks:*`)) as [string];
    const record = await stored(id);
    expect(sealedWith(record.secret)).to.equal(idOf(keyA));
    expect(await redis.hget(hooksKey, id)).to.not.include(secret.slice("whsec_".length));
    const rotated = await s.admin.send("POST", `${HOOKS}/${id}/secret`);
    second = rotated.body.secret as string;
    const both = await stored(id);
    expect([sealedWith(both.secret), sealedWith(both.previousSecret.secret)]).to.deep.equal([
      idOf(keyA),
      idOf(keyA),
    ]);
    expect(JSON.stringify(both)).to.not.include(second.slice(6)).and.not.include(secret.slice(6));

    // A subscription stored before there was a key: its secret as it is.
    const old = await s.admin.send("POST", HOOKS, { url: r.url, tables: ["customer"], verbs: ["INSERT"] });
    const oldSecret = old.body.secret as string;
    await redis.hset(
      hooksKey,
      old.body.id,
      JSON.stringify({ ...(await stored(old.body.id)), secret: oldSecret }),
    );

    await deliverer(`${keyB},${keyA}`);
    await until("both sealed under the new key", async () => {
      const [a, b] = [await stored(id), await stored(old.body.id)];
      return [a.secret, a.previousSecret.secret, b.secret].every((v) => sealedWith(v) === idOf(keyB));
    });
    expect(await redis.hget(hooksKey, old.body.id)).to.not.include(oldSecret.slice(6));
    // The deliveries still carry the secrets the receivers know.
    expect((await s.api.post(s.key, "product", { name: "Sealed", price: 1 })).status).to.equal(201);
    expect((await s.api.post(s.key, "customer", { name: "Sealed", credit_limit: 1 })).status).to.equal(201);
    await until("both delivered", async () => r.delivered().size === 2);
    const byTable = (t: string) => r.received.find((d) => d.body.data.table === t)!;
    expect(signedBy(byTable("product"), second)).to.equal(true);
    expect(signedBy(byTable("product"), secret)).to.equal(true);
    expect(signedBy(byTable("customer"), oldSecret)).to.equal(true);
    await stopAll();
    expect((await s.admin.send("DELETE", `${HOOKS}/${old.body.id}`)).status).to.equal(200);
  });

  it("a process without the sealing key sends nothing and says why; one with it sends the event", async () => {
    const [hook] = ((await s.admin.send("GET", HOOKS)).body as Row[]).filter(
      (h) => h.tables[0] === "product",
    );
    const before = r.received.length;
    await deliverer(newKey());
    expect((await s.api.post(s.key, "product", { name: "Unsigned", price: 1 })).status).to.equal(201);
    await until("a failed attempt naming the key", async () =>
      (await log(hook!.id)).some((e) => e.outcome === "failed" && /not configured here/.test(e.error)),
    );
    expect(r.received.length, "nothing reached the receiver").to.equal(before);
    await stopAll();
    await deliverer(keyB);
    await until("the event delivered", async () =>
      r.received.some((d) => d.body.data.row.name === "Unsigned" && d.status === 200),
    );
    expect(signedBy(r.received.find((d) => d.body.data.row.name === "Unsigned")!, second)).to.equal(true);
  });
});
