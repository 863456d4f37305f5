/**
 * The pure parts of webhooks (docs/webhooks.md): Standard Webhooks signatures
 * (the specification's own test vector), the back-off schedule, the delivery
 * body, which events a subscription takes, and the start-up checks of their settings.
 */
import { expect } from "chai";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { compileProject, type ProjectModel } from "../../../services/data/src/domain/model/project-model.ts";
import { retryDelayMs } from "../../../services/data/src/hooks/backoff.ts";
import { renderDelivery } from "../../../services/data/src/hooks/payload.ts";
import {
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  webhookHeaders,
} from "../../../services/data/src/hooks/signature.ts";
import { compileEventTest, webhookUrlProblem } from "../../../services/data/src/hooks/subscription-rules.ts";
import type { FeedEvent } from "../../../services/data/src/store/change-feed.ts";
import {
  ConfigError,
  dataConfigSchema,
  parseConfig,
  webhookProblems,
} from "../../../shared/config/config.ts";
import { ApiError } from "../../../shared/errors.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { testIdentity } from "../../fixtures/project-identity.ts";

function model(): ProjectModel {
  const parsed = parseProjectDefinition(demoProject());
  if (!parsed.ok) throw new Error("demo project");
  const compiled = compileProject(testIdentity, parsed.definition);
  if (!compiled.ok) throw new Error("demo project");
  return compiled.model;
}

function event(overrides: Partial<FeedEvent> = {}): FeedEvent {
  return {
    id: "1764150000000-3",
    tx: "tx-1",
    table: "customer",
    verb: "UPDATE",
    key: "Alpha",
    row: { _id: "Alpha", _ck: "abc", name: "Alpha", balance: 150, region: "EU" },
    oldRow: null,
    oldChecksum: "old",
    rules: ["customer balance"],
    ...overrides,
  };
}

function errorOf(f: () => unknown): ApiError {
  try {
    f();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("no error");
}

describe("webhook signatures (Standard Webhooks)", () => {
  // The specification's test vector.
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  const body = '{"test": 2432232314}';

  it("signs id, timestamp and body with HMAC-SHA256 of the secret's bytes", () => {
    expect(signWebhook(secret, id, 1614265330, body)).to.equal(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });

  it("verifies one of several signatures, and nothing else", () => {
    const good = signWebhook(secret, id, 1614265330, body);
    expect(verifyWebhook(secret, id, 1614265330, body, `v1,AAAA ${good}`)).to.equal(true);
    expect(verifyWebhook(secret, id, 1614265331, body, good)).to.equal(false);
    expect(verifyWebhook(secret, id, 1614265330, `${body} `, good)).to.equal(false);
    expect(verifyWebhook(newWebhookSecret(), id, 1614265330, body, good)).to.equal(false);
  });

  it("makes secrets of 32 random bytes and the three headers", () => {
    const made = newWebhookSecret();
    expect(made).to.match(/^whsec_/);
    expect(Buffer.from(made.slice(6), "base64")).to.have.length(32);
    expect(newWebhookSecret()).to.not.equal(made);
    const headers = webhookHeaders([secret], id, 1614265330, body);
    expect(headers).to.deep.equal({
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
  });

  it("signs with each secret of a rotation, so that a receiver holding either one verifies", () => {
    const next = newWebhookSecret();
    const header = webhookHeaders([next, secret], id, 1614265330, body)["webhook-signature"]!;
    expect(header.split(" ")).to.have.length(2);
    expect(verifyWebhook(secret, id, 1614265330, body, header)).to.equal(true);
    expect(verifyWebhook(next, id, 1614265330, body, header)).to.equal(true);
    expect(verifyWebhook(newWebhookSecret(), id, 1614265330, body, header)).to.equal(false);
  });
});

describe("webhook back-off", () => {
  const backoff = { baseMs: 1000, capMs: 60_000 };

  it("doubles from the base up to the cap", () => {
    expect([1, 2, 3, 4, 7, 8, 100].map((n) => retryDelayMs(backoff, n, 0))).to.deep.equal([
      1000, 2000, 4000, 8000, 60_000, 60_000, 60_000,
    ]);
  });

  it("takes at most a quarter off at random", () => {
    expect(retryDelayMs(backoff, 3, 0.999)).to.be.within(3000, 3010);
    expect(retryDelayMs(backoff, 3, 0.5)).to.equal(3500);
  });
});

describe("webhook deliveries", () => {
  it("renders the event as {type, timestamp, data} with the row's columns and the API's checksums", () => {
    const d = renderDelivery({ account: "acme", project: "shop", subscription: "wh_1" }, event());
    expect(d.webhookId).to.equal("msg_wh_1_1764150000000-3");
    expect(d.type).to.equal("row.updated");
    expect(JSON.parse(d.body)).to.deep.equal({
      type: "row.updated",
      timestamp: "2025-11-26T09:40:00.000Z",
      data: {
        account: "acme",
        project: "shop",
        subscription: "wh_1",
        position: "1764150000000-3",
        tx: "tx-1",
        table: "customer",
        verb: "UPDATE",
        key: "Alpha",
        row: { name: "Alpha", balance: 150, region: "EU" },
        oldRow: null,
        checksum: "R:abc",
        oldChecksum: "R:old",
        rules: ["customer balance"],
      },
    });
    const deleted = renderDelivery(
      { account: "acme", project: "shop", subscription: "wh_1" },
      event({ verb: "DELETE", row: null, oldRow: { _id: "Alpha", _ck: "abc", name: "Alpha" } }),
    );
    expect(JSON.parse(deleted.body).data).to.include({ checksum: null });
    expect(JSON.parse(deleted.body).data.oldRow).to.deep.equal({ name: "Alpha" });
    // An update keeps its row as it was in the feed; the delivery shows it for deletes only.
    const before = { _id: "Alpha", _ck: "old", name: "Alpha", balance: 500, region: "EU" };
    const updated = renderDelivery(
      { account: "acme", project: "shop", subscription: "wh_1" },
      event({ oldRow: before }),
    );
    expect(JSON.parse(updated.body).data.oldRow).to.equal(null);
    // A leave: the key and the change's metadata, nothing of the new state.
    const left = renderDelivery(
      { account: "acme", project: "shop", subscription: "wh_1" },
      event({ oldRow: before }),
      "leave",
    );
    expect(left.type).to.equal("row.left");
    expect(JSON.parse(left.body).data).to.include({
      verb: "UPDATE",
      key: "Alpha",
      row: null,
      oldRow: null,
      checksum: null,
      oldChecksum: "R:old",
    });
  });
});

describe("which events a subscription takes", () => {
  it("its tables and verbs, rows (a delete: the row as it was) its filter admits", () => {
    const test = compileEventTest(model(), {
      tables: ["customer"],
      verbs: ["UPDATE", "DELETE"],
      filter: "balance > 100 and region = 'EU'",
    });
    expect(test(event())).to.equal("change");
    expect(test(event({ row: { _id: "B", _ck: "x", name: "B", balance: 50, region: "EU" } }))).to.equal(null);
    expect(test(event({ verb: "INSERT" }))).to.equal(null);
    expect(test(event({ table: "purchaseorder" }))).to.equal(null);
    const gone = { _id: "A", _ck: "x", name: "A", balance: 500, region: "EU" };
    expect(test(event({ verb: "DELETE", row: null, oldRow: gone }))).to.equal("change");
    expect(test(event({ verb: "DELETE", row: null, oldRow: { ...gone, balance: 5 } }))).to.equal(null);
    // an update of a row the filter admitted, to one it does not: a leave; one it never admitted: nothing
    const below = { _id: "A", _ck: "y", name: "A", balance: 50, region: "EU" };
    expect(test(event({ row: below, oldRow: gone }))).to.equal("leave");
    expect(test(event({ row: below, oldRow: { ...below, _ck: "z" } }))).to.equal(null);
  });

  it("refuses unknown tables (4001) and filters not valid on every table, or with globals (4002)", () => {
    const m = model();
    const base = { verbs: ["INSERT" as const], filter: null };
    expect(errorOf(() => compileEventTest(m, { ...base, tables: ["nope"] })).errorCode).to.equal(4001);
    for (const filter of ["balance >", "region = 'EU'", "name = @{who}"]) {
      const err = errorOf(() =>
        compileEventTest(m, { ...base, tables: ["customer", "purchaseorder"], filter }),
      );
      expect(err.errorCode, filter).to.equal(4002);
    }
  });

  it("takes http(s) URLs without credentials or fragment", () => {
    expect(webhookUrlProblem("https://example.com/hook?x=1")).to.equal(undefined);
    for (const url of ["ftp://example.com/", "https://u:p@example.com/", "https://example.com/#x", "nope"])
      expect(webhookUrlProblem(url), url).to.be.a("string");
  });
});

describe("webhook settings", () => {
  it("a claim period no longer than a delivery's time limit, or a cap below the base, stops the start", () => {
    expect(webhookProblems({ WEBHOOK_TIMEOUT_MS: 10_000, WEBHOOK_CLAIM_IDLE_MS: 10_000 })).to.have.length(1);
    expect(webhookProblems({ WEBHOOK_BACKOFF_BASE_MS: 500, WEBHOOK_BACKOFF_CAP_MS: 100 })).to.have.length(1);
    const env = { MONGO_URL: "mongodb://x", ADMIN_TOKEN: "t".repeat(32), SERVICE_TOKEN: "s".repeat(32) };
    expect(() => parseConfig(dataConfigSchema, { ...env, WEBHOOK_TIMEOUT_MS: "70000" })).to.throw(
      ConfigError,
    );
    expect(() => parseConfig(dataConfigSchema, { ...env, WEBHOOK_CLAIM_IDLE_MS: "5000" })).to.throw(
      ConfigError,
      /WEBHOOK_CLAIM_IDLE_MS/,
    );
    const config = parseConfig(dataConfigSchema, env);
    expect(config).to.include({
      WEBHOOK_DELIVERY: true,
      WEBHOOK_CONCURRENCY: 64,
      WEBHOOK_ACCOUNT_CONCURRENCY: 32,
      WEBHOOK_SUBSCRIPTION_CONCURRENCY: 16,
      WEBHOOK_CIRCUIT_TIMEOUTS: 5,
      WEBHOOK_CIRCUIT_OPEN_MS: 30_000,
      WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT: 100,
      WEBHOOK_RETRY_WINDOW_SECONDS: 86_400,
    });
  });
});
