/**
 * One reader per project stream and process (docs/realtime.md): while a
 * project has live subscribers here, one Redis connection of this process
 * follows its change feed with a blocking XREAD and hands every batch of
 * events to each subscriber (one that throws is logged, and the others still
 * get the batch); the last subscriber to leave stops it. Each data
 * replica follows the streams of its own subscribers, so the feed reaches them
 * whichever replica served the write.
 */
import type { Logger } from "../../../../shared/logger.ts";
import type { RedisClient } from "../../../../shared/redis/clients.ts";
import { type FeedEvent, parseFeedEntry } from "../store/change-feed.ts";

export type FeedListener = (events: FeedEvent[]) => void;

/**
 * Compares two stream ids (`<ms>-<seq>`, decimal numbers without leading zeros, as Redis writes
 * them and parseStreamId accepts them): by length, then by digits, part by part, allocating nothing
 * (every subscriber compares every event).
 */
export function compareIds(a: string, b: string): number {
  const ad = a.indexOf("-");
  const bd = b.indexOf("-");
  return comparePart(a, 0, ad, b, 0, bd) || comparePart(a, ad + 1, a.length, b, bd + 1, b.length);
}

/** Compares the decimal numbers a[aStart, aEnd) and b[bStart, bEnd), leading zeros ignored. */
function comparePart(
  a: string,
  aStart: number,
  aEnd: number,
  b: string,
  bStart: number,
  bEnd: number,
): number {
  let i = aStart;
  let j = bStart;
  while (i < aEnd - 1 && a.charCodeAt(i) === 48) i++;
  while (j < bEnd - 1 && b.charCodeAt(j) === 48) j++;
  if (aEnd - i !== bEnd - j) return aEnd - i < bEnd - j ? -1 : 1;
  for (; i < aEnd; i++, j++) {
    const d = a.charCodeAt(i) - b.charCodeAt(j);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** A stream id as a client sends it back (`Last-Event-ID`): `<ms>-<seq>`, else null. */
export function parseStreamId(text: string | undefined): string | null {
  return text !== undefined && /^\d{1,20}-\d{1,20}$/.test(text) ? text : null;
}

class StreamFollower {
  readonly listeners = new Set<FeedListener>();
  #stopped = false;
  readonly #stream: string;
  readonly #connection: RedisClient;
  readonly #blockMs: number;
  readonly #logger: Logger;

  constructor(stream: string, connection: RedisClient, blockMs: number, logger: Logger) {
    this.#stream = stream;
    this.#connection = connection;
    this.#blockMs = blockMs;
    this.#logger = logger;
  }

  /** Follows the stream from `after` until stopped. */
  async run(after: string): Promise<void> {
    let last = after;
    while (!this.#stopped) {
      try {
        const reply = await this.#connection.xread(
          "COUNT",
          1000,
          "BLOCK",
          this.#blockMs,
          "STREAMS",
          this.#stream,
          last,
        );
        const entries = reply?.[0]?.[1] ?? [];
        const newest = entries.at(-1);
        if (!newest) continue;
        last = newest[0];
        const events = entries.flatMap(([id, flat]) => parseFeedEntry(id, flat) ?? []);
        for (const listener of this.listeners) this.#hand(listener, events);
      } catch (err) {
        if (this.#stopped) return;
        this.#logger.warn({ error: err instanceof Error ? err.name : typeof err }, "change feed read failed");
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /** Hands a batch to one listener: one that throws is logged, and the others still get the batch. */
  #hand(listener: FeedListener, events: FeedEvent[]): void {
    try {
      listener(events);
    } catch (err) {
      this.#logger.error(
        {
          error: err instanceof Error ? err.name : typeof err,
          stack: err instanceof Error ? err.stack : undefined,
        },
        "a change feed listener failed on a batch",
      );
    }
  }

  stop(): void {
    this.#stopped = true;
    this.#connection.disconnect();
  }
}

export class FeedHub {
  readonly #followers = new Map<string, StreamFollower>();
  readonly #redis: RedisClient;
  readonly #connect: () => RedisClient;
  readonly #blockMs: number;
  readonly #logger: Logger;

  /** `connect` opens a connection of its own for each followed stream (XREAD BLOCK holds it). */
  constructor(redis: RedisClient, connect: () => RedisClient, logger: Logger, blockMs = 5000) {
    this.#redis = redis;
    this.#connect = connect;
    this.#logger = logger;
    this.#blockMs = blockMs;
  }

  /** The id of the newest event of `stream` (`0-0` when it has none). */
  async position(stream: string): Promise<string> {
    const newest = await this.#redis.xrevrange(stream, "+", "-", "COUNT", 1);
    return newest[0]?.[0] ?? "0-0";
  }

  /**
   * Whether `after` is no position to resume from: events after it may have been trimmed away
   * (retention: the oldest event kept is later, or none is kept), or the stream never reached it
   * (a position of another stream). Errs on the side of "lost" (the reader starts afresh).
   */
  async lost(stream: string, after: string): Promise<boolean> {
    const [oldest, newest] = await Promise.all([
      this.#redis.xrange(stream, "-", "+", "COUNT", 1),
      this.position(stream),
    ]);
    const [first] = oldest;
    if (!first) return compareIds(after, "0-0") > 0;
    return compareIds(first[0], after) > 0 || compareIds(after, newest) > 0;
  }

  /** Up to `count` events of `stream` after `after`, oldest first. */
  async history(stream: string, after: string, count: number): Promise<FeedEvent[]> {
    const entries = await this.#redis.xrange(stream, `(${after}`, "+", "COUNT", count);
    return entries.flatMap(([id, flat]) => parseFeedEntry(id, flat) ?? []);
  }

  /**
   * Hands every event appended to `stream` from now on to `listener` (events appended before it
   * joined may come too: a listener drops what it has seen by id). Returns the unsubscribe call.
   */
  async subscribe(stream: string, listener: FeedListener): Promise<() => void> {
    let follower = this.#followers.get(stream);
    if (!follower) {
      const from = await this.position(stream);
      follower = this.#followers.get(stream);
      if (!follower) {
        follower = new StreamFollower(stream, this.#connect(), this.#blockMs, this.#logger);
        this.#followers.set(stream, follower);
        void follower.run(from);
      }
    }
    const joined = follower;
    joined.listeners.add(listener);
    return () => {
      joined.listeners.delete(listener);
      if (joined.listeners.size === 0 && this.#followers.get(stream) === joined) {
        this.#followers.delete(stream);
        joined.stop();
      }
    };
  }

  /** Streams followed now (for metrics and tests). */
  get following(): number {
    return this.#followers.size;
  }

  close(): void {
    for (const f of this.#followers.values()) f.stop();
    this.#followers.clear();
  }
}
