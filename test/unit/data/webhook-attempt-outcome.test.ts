/**
 * What becomes of a webhook event after one attempt (hooks/attempt-outcome.ts), without Redis, and
 * the webhook store's records read through their schemas (store/webhook-records.ts).
 */
import { expect } from "chai";
import { attemptOutcome } from "../../../services/data/src/hooks/attempt-outcome.ts";
import type { AttemptResult } from "../../../services/data/src/hooks/egress.ts";
import type { Delivery } from "../../../services/data/src/hooks/payload.ts";
import {
  deadLetterRecord,
  webhookSubscriptionRecord,
} from "../../../services/data/src/store/webhook-records.ts";
import type { RetryState } from "../../../services/data/src/store/webhook-store.ts";
import { readStoredJson } from "../../../shared/stored-json.ts";

const delivery: Delivery = { webhookId: "msg_1", position: "1-0", type: "row.created", body: "{}" };
const policy = { retryWindowMs: 60_000, backoff: { baseMs: 1000, capMs: 8000 } };
const answered: AttemptResult = { status: 204, error: null, latencyMs: 5, timedOut: false };
const refused: AttemptResult = { status: 500, error: "HTTP 500", latencyMs: 7, timedOut: false };
const retryOf = (attempts: number, firstAttemptAt: number): RetryState => ({
  ...delivery,
  attempts,
  firstAttemptAt,
  lastStatus: 500,
  lastError: "HTTP 500",
});

describe("webhook attempt outcome", () => {
  it("a 2xx answer settles a first attempt and a retry alike, counting the attempt", () => {
    expect(attemptOutcome(delivery, null, answered, policy, 1000)).to.deep.equal({
      kind: "settle",
      attempt: 1,
    });
    expect(attemptOutcome(delivery, retryOf(3, 0), answered, policy, 9000)).to.deep.equal({
      kind: "settle",
      attempt: 4,
    });
  });

  it("a first failure is retried after the back-off's base, its window starting now", () => {
    const outcome = attemptOutcome(delivery, null, refused, policy, 10_000, 0);
    expect(outcome).to.deep.equal({
      kind: "retry",
      attempt: 1,
      at: 11_000,
      state: { ...delivery, attempts: 1, firstAttemptAt: 10_000, lastStatus: 500, lastError: "HTTP 500" },
    });
  });

  it("a later failure keeps its first failure's time and backs off further, up to the cap", () => {
    const third = attemptOutcome(delivery, retryOf(2, 10_000), refused, policy, 20_000, 0);
    expect(third).to.include({ kind: "retry", attempt: 3, at: 24_000 });
    const late = attemptOutcome(delivery, retryOf(9, 10_000), refused, policy, 30_000, 0);
    expect(late).to.include({ kind: "retry", at: 38_000 });
    if (late.kind !== "retry") throw new Error("a retry");
    expect(late.state.firstAttemptAt).to.equal(10_000);
  });

  it("parks the event once the retry window has passed since its first failure", () => {
    const justBefore = attemptOutcome(delivery, retryOf(5, 0), refused, policy, 59_999, 0);
    expect(justBefore.kind).to.equal("retry");
    const parked = attemptOutcome(delivery, retryOf(5, 0), refused, policy, 60_000, 0);
    expect(parked).to.deep.equal({
      kind: "park",
      attempt: 6,
      dead: { ...retryOf(6, 0), parkedAt: 60_000 },
    });
  });

  it("a window of zero parks at the first failure (a retry never comes)", () => {
    const outcome = attemptOutcome(delivery, null, refused, { ...policy, retryWindowMs: 0 }, 5, 0);
    expect(outcome.kind).to.equal("park");
  });
});

describe("webhook store records", () => {
  const subscription = {
    id: "h1",
    account: "acme",
    project: "shop",
    projectUid: "u1",
    url: "https://example.com/hook",
    tables: ["product"],
    verbs: ["INSERT"],
    filter: null,
    description: "",
    secret: "whsec_x",
    created: "2026-11-26T00:00:00.000Z",
  };

  it("reads a subscription stored before rotations (no previous secret), keeping fields it does not name", () => {
    const read = readStoredJson(
      webhookSubscriptionRecord,
      "webhook subscription",
      JSON.stringify({ ...subscription, later: 1 }),
    );
    expect(read).to.deep.equal({ ...subscription, later: 1 });
  });

  it("refuses a record that is not one, naming the field and not the text", () => {
    const text = JSON.stringify({ ...subscription, secret: 7 });
    expect(() => readStoredJson(webhookSubscriptionRecord, "webhook subscription", text)).to.throw(
      /stored webhook subscription does not read: secret/,
    );
    expect(() => readStoredJson(deadLetterRecord, "webhook dead letter", "whsec_not json")).to.throw(
      /^a stored webhook dead letter is not JSON$/,
    );
  });
});
