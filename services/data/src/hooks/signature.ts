/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com/): a secret is
 * `whsec_` + base64 of random bytes; a delivery carries `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature`: `v1,` + base64 of
 * HMAC-SHA256 keyed with the secret's bytes over `<id>.<timestamp>.<body>`.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const PREFIX = "whsec_";

/** A new secret: 32 random bytes. */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(32).toString("base64")}`;
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
}

/** The `webhook-signature` value of one delivery. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** Whether one of the space-separated signatures of `header` is the delivery's (what a receiver checks). */
export function verifyWebhook(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
  header: string,
): boolean {
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body));
  return header.split(" ").some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * The headers of one delivery, signed with each of `secrets` (space-separated: while a rotated
 * secret's predecessor is still valid, a receiver that knows either one verifies the delivery).
 */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(" "),
  };
}
