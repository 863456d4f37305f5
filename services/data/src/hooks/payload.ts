/**
 * The body of one webhook delivery (docs/webhooks.md), in the Standard Webhooks
 * shape `{type, timestamp, data}`: `type` is `row.inserted`, `row.updated` or
 * `row.deleted`; `data` the whole row change as the feed has it, with the row's
 * columns (no storage fields) and its checksum as the data API shows it. An
 * update that made a row leave the subscription's filter is `row.left`: its key,
 * nothing of its new state.
 */
import type { FeedEvent, FeedVerb } from "../store/change-feed.ts";
import type { RowDocument } from "../store/tenant-rows.ts";

const TYPES: Record<FeedVerb, string> = {
  INSERT: "row.inserted",
  UPDATE: "row.updated",
  DELETE: "row.deleted",
};

/** One event, ready to send to one subscription. */
export interface Delivery {
  /** `webhook-id`: the same for every attempt of this event to this subscription. */
  webhookId: string;
  /** The event's feed position. */
  position: string;
  type: string;
  body: string;
}

function columns(doc: RowDocument | null): Record<string, unknown> | null {
  if (!doc) return null;
  const { _id, _ck, ...rest } = doc;
  return rest;
}

export function webhookIdOf(subscription: string, position: string): string {
  return `msg_${subscription}_${position}`;
}

/** `announced`: the event as the subscription's test saw it (subscription-rules.ts). */
export function renderDelivery(
  scope: { account: string; project: string; subscription: string },
  event: FeedEvent,
  announced: "change" | "leave" = "change",
): Delivery {
  const left = announced === "leave";
  const type = left ? "row.left" : TYPES[event.verb];
  const millis = Number(event.id.split("-")[0]);
  const data = {
    account: scope.account,
    project: scope.project,
    subscription: scope.subscription,
    position: event.id,
    tx: event.tx,
    table: event.table,
    verb: event.verb,
    key: event.key,
    row: left ? null : columns(event.row),
    // The feed keeps an update's row as it was too; deliveries carry it for deletes only.
    oldRow: event.verb === "DELETE" ? columns(event.oldRow) : null,
    checksum: event.row && !left ? `R:${event.row._ck}` : null,
    oldChecksum: event.oldChecksum === null ? null : `R:${event.oldChecksum}`,
    rules: event.rules,
  };
  return {
    webhookId: webhookIdOf(scope.subscription, event.id),
    position: event.id,
    type,
    body: JSON.stringify({ type, timestamp: new Date(millis).toISOString(), data }),
  };
}
