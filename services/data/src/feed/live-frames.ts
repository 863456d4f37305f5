/**
 * Change events as Server-Sent Events frames, evaluated and encoded once per view (docs/realtime.md):
 * subscribers whose views have the same key (feed/live-view.ts: liveViewKey) see exactly the same of
 * every event, so the first of them to handle an event evaluates its view and encodes the frame, and
 * the others reuse that text; a batch the hub hands out is likewise joined into one text per view (one
 * socket write per subscriber and batch). The cache hangs off the event objects and batch arrays the
 * hub shares between its listeners (WeakMaps): it lives as long as they do, with nothing to register
 * or clean up.
 */
import type { FeedEvent } from "../store/change-feed.ts";
import type { LiveView } from "./live-view.ts";

/** A subscriber's view and the key it shares with every subscriber that sees the same. */
export interface KeyedView {
  key: string;
  view: LiveView;
}

/** One Server-Sent Event. */
export function sseFrame(event: string, data: unknown, id?: string): string {
  return `${id ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class LiveFrames {
  readonly #byEvent = new WeakMap<FeedEvent, Map<string, string | null>>();
  readonly #byBatch = new WeakMap<readonly FeedEvent[], Map<string, string>>();

  /** The `change` (or `leave`) frame of `event` for `keyed`'s view, or null when that view hides the event. */
  frame(keyed: KeyedView, event: FeedEvent): string | null {
    const frames = byViewKey(this.#byEvent, event);
    let text = frames.get(keyed.key);
    if (text === undefined) {
      const notice = keyed.view(event);
      text = notice ? sseFrame(notice.event, notice.data, event.id) : null;
      frames.set(keyed.key, text);
    }
    return text;
  }

  /** The frames of every event of `batch` for `keyed`'s view, joined in order ("" when it sees none). */
  batch(keyed: KeyedView, batch: readonly FeedEvent[]): string {
    const texts = byViewKey(this.#byBatch, batch);
    let text = texts.get(keyed.key);
    if (text === undefined) {
      text = "";
      for (const event of batch) text += this.frame(keyed, event) ?? "";
      texts.set(keyed.key, text);
    }
    return text;
  }
}

/** The texts of `owner` (an event, a batch) by view key, made on first use. */
function byViewKey<T>(maps: WeakMap<object, Map<string, T>>, owner: object): Map<string, T> {
  let texts = maps.get(owner);
  if (!texts) {
    texts = new Map();
    maps.set(owner, texts);
  }
  return texts;
}
