/**
 * The records the webhook store keeps in Redis (store/webhook-store.ts), each read through its
 * schema rather than believed: a subscription, the index's project incarnations, an event's retry
 * state, a dead letter and a delivery log entry. Fields a record does not name are kept as they are
 * (a record written by a later release reads, and is written back whole).
 */
import { z } from "zod";

const verb = z.enum(["INSERT", "UPDATE", "DELETE"]);

export const webhookSubscriptionRecord = z.looseObject({
  id: z.string(),
  account: z.string(),
  project: z.string(),
  /** The project incarnation it was made for: a project created again under the name has none of it. */
  projectUid: z.string(),
  url: z.string(),
  tables: z.array(z.string()),
  verbs: z.array(verb),
  filter: z.string().nullable(),
  description: z.string(),
  /**
   * `whsec_` + base64, as the store keeps it: sealed under SECRETS_KEY (store/secret-box.ts), or as
   * it is without one. It signs every delivery (Standard Webhooks), so it is not hashed.
   */
  secret: z.string(),
  /** The secret a rotation replaced (kept as `secret` is), which signs beside the new one until `until` (ms). */
  previousSecret: z.looseObject({ secret: z.string(), until: z.number() }).optional(),
  created: z.string(),
});

export type WebhookSubscription = z.infer<typeof webhookSubscriptionRecord>;

/** A project incarnation with subscriptions, as the index keeps it. */
export const webhookProjectRecord = z.looseObject({
  account: z.string(),
  project: z.string(),
  uid: z.string(),
  storage: z.object({ database: z.string(), collectionPrefix: z.string() }),
});

export type WebhookProject = z.infer<typeof webhookProjectRecord>;

/** An event that failed at least once: what is needed to send it again, whatever the feed kept. */
export const retryStateRecord = z.looseObject({
  webhookId: z.string(),
  /** The feed position of the event. */
  position: z.string(),
  type: z.string(),
  body: z.string(),
  attempts: z.number(),
  firstAttemptAt: z.number(),
  lastStatus: z.number().nullable(),
  lastError: z.string().nullable(),
});

export type RetryState = z.infer<typeof retryStateRecord>;

export const deadLetterRecord = retryStateRecord.extend({ parkedAt: z.number() });

export type DeadLetter = z.infer<typeof deadLetterRecord>;

export const deliveryOutcome = z.enum(["delivered", "failed", "dead", "lost"]);

export type DeliveryOutcome = z.infer<typeof deliveryOutcome>;

export const deliveryLogRecord = z.looseObject({
  at: z.number(),
  outcome: deliveryOutcome,
  webhookId: z.string().nullable(),
  position: z.string().nullable(),
  attempt: z.number(),
  status: z.number().nullable(),
  latencyMs: z.number().nullable(),
  error: z.string().nullable(),
});

export type DeliveryLogEntry = z.infer<typeof deliveryLogRecord>;
