/**
 * The webhook deliveries of a project (docs/webhooks.md) in the OpenAPI
 * document's `webhooks` section: what Tessera POSTs to a subscription's URL.
 * Rows are described as objects of columns without naming them (a subscription
 * is an administrator's and sees whole rows; this document follows a key's view).
 */
import type { Json } from "./openapi-common.ts";

const header = (name: string, description: string, example: string): Json => ({
  name,
  in: "header",
  required: true,
  description,
  schema: { type: "string" },
  example,
});

const ROW: Json = {
  type: ["object", "null"],
  additionalProperties: true,
  description: "The row's columns (not the resource's attribute names).",
};

const DELIVERY: Json = {
  type: "object",
  required: ["type", "timestamp", "data"],
  properties: {
    type: { type: "string", enum: ["row.inserted", "row.updated", "row.deleted", "row.left"] },
    timestamp: { type: "string", format: "date-time", description: "When the write committed." },
    data: {
      type: "object",
      required: [
        "account",
        "project",
        "subscription",
        "position",
        "tx",
        "table",
        "verb",
        "key",
        "row",
        "oldRow",
      ],
      properties: {
        account: { type: "string" },
        project: { type: "string" },
        subscription: { type: "string", description: "The subscription's id (`wh_…`)." },
        position: { type: "string", description: "The event's change-feed position (`<ms>-<seq>`)." },
        tx: { type: "string", description: "The write's id: every row of one request shares it." },
        table: { type: "string" },
        verb: { type: "string", enum: ["INSERT", "UPDATE", "DELETE"] },
        key: { description: "The row's key value (a composite key: the JSON text of its values)." },
        row: { ...ROW, description: "The row as committed; null for a delete and for `row.left`." },
        oldRow: { ...ROW, description: "A delete's row as it was; null otherwise." },
        checksum: {
          type: ["string", "null"],
          description: "`R:…`, as the data API shows it; null for a delete and for `row.left`.",
        },
        oldChecksum: {
          type: ["string", "null"],
          description: "The row's checksum before; null for an insert.",
        },
        rules: { type: "array", items: { type: "string" }, description: "The rules that ran for the row." },
      },
    },
  },
};

export const WEBHOOKS: Json = {
  rowChange: {
    post: {
      summary: "A row change, sent to a webhook subscription's URL",
      description:
        "One POST per changed row a subscription takes (its tables, verbs and filter), signed per Standard Webhooks. " +
        "Answer 2xx within the time limit; anything else is retried with back-off, then parked as a dead letter. " +
        "Delivery is at least once: deduplicate by `webhook-id`. Subscriptions are made on the admin API (docs/webhooks.md).",
      parameters: [
        header(
          "webhook-id",
          "The same for every attempt of this event to this subscription.",
          "msg_wh_3f0c6f0a9d2e4b1c8a7e6d5c_1764150000000-0",
        ),
        header("webhook-timestamp", "The attempt's time, Unix seconds.", "1764150000"),
        header(
          "webhook-signature",
          "`v1,` + base64(HMAC-SHA256(secret bytes, `<webhook-id>.<webhook-timestamp>.<body>`)); " +
            "after a secret rotation, one such signature per valid secret, space-separated: accept the delivery if any one verifies.",
          "v1,Kx6Dg1cN3q8l0c3o7uD8h2V6pT0f4rB1mE9wZ5yA2sI=",
        ),
      ],
      requestBody: { required: true, content: { "application/json": { schema: DELIVERY } } },
      responses: {
        "2XX": { description: "Delivered." },
        default: { description: "Not delivered: the event is tried again later." },
      },
    },
  },
};
