/**
 * Live queries (docs/realtime.md): a GET of a table-based resource with
 * `Accept: text/event-stream` answers Server-Sent Events: the first page as a
 * GET would answer it (`snapshot`), then every change of the project's change
 * feed that the key may see (`change`, one object, `id:` its feed position),
 * filtered per event by feed/live-view.ts. Streams whose views have the same
 * key share one evaluation and one encoded frame per event
 * (feed/live-frames.ts), and each batch of events the hub hands out is one
 * socket write per stream.
 *  - `Last-Event-ID` (the header EventSource sends when it reconnects) resumes
 *    after that position, without a snapshot; a position the feed no longer
 *    keeps answers `reset` and starts afresh with a snapshot.
 *  - The key is checked again every LIVE_KEY_CHECK_MS, once for all the streams
 *    of that key in this process (http/grouped-checks.ts): a disabled, deleted or
 *    expired key ends them with a `closed` event (the error body).
 *  - A comment line every LIVE_HEARTBEAT_MS keeps proxies from closing it.
 *  - A client that reads slower than the feed grows its socket's buffer; past
 *    LIVE_MAX_BUFFER_BYTES the stream ends with a `cut` event, and the client
 *    resumes from the last id it received.
 *  - Open streams per account and per key are limited in each process: 429/4295.
 *  - A process shutting down cuts its streams the same way (checked with the key).
 */
import type { Context } from "koa";
import { ApiError, ErrorCode, errors } from "../../../../shared/errors.ts";
import type { KeyValidator } from "../../../../shared/keys/key-validation.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { ResourceModel } from "../domain/model/project-model.ts";
import { readFromParams } from "../domain/read/resource-read.ts";
import { compareIds, type FeedHub, parseStreamId } from "../feed/feed-hub.ts";
import { sseFrame as frame, type KeyedView, LiveFrames } from "../feed/live-frames.ts";
import { liveView, liveViewKey } from "../feed/live-view.ts";
import type { ChangeFeed, FeedEvent } from "../store/change-feed.ts";
import type { TenantRows } from "../store/tenant-rows.ts";
import { GroupedChecks } from "./grouped-checks.ts";
import type { ProjectRequest } from "./project-request.ts";

export interface LiveLimits {
  perAccount: number;
  perKey: number;
  heartbeatMs: number;
  keyCheckMs: number;
  maxBufferBytes: number;
}

export interface LiveStreamDeps {
  hub: FeedHub;
  feed: ChangeFeed;
  tenants: TenantRows;
  keys: KeyValidator;
  limits: LiveLimits;
  logger: Logger;
  /** Called when a slow client's stream is cut. */
  onCut?: () => void;
  /** True once the process is shutting down: its streams are cut (clients resume elsewhere). */
  shuttingDown: () => boolean;
  /** The account's own limit of open streams (its plan's `liveStreams`); null: `limits.perAccount`. */
  accountLimit?: (account: string) => Promise<number | null>;
  /** Told of each stream that opens; the function it answers is called when the stream closes (metering). */
  opened?: (account: string, project: string) => () => void;
}

/** Events read from the feed at once when catching up. */
const HISTORY_PAGE = 500;

/** Whether the client asks for the event stream rather than a JSON (or other) answer. */
export function wantsEventStream(ctx: Context): boolean {
  return ctx.get("accept").includes("text/event-stream");
}

function tooManyStreams(scope: string): ApiError {
  return new ApiError(
    429,
    ErrorCode.tooManyStreams,
    `Too many live queries open for this ${scope}; close one and try again`,
    { headers: { "Retry-After": "1" } },
  );
}

/** Counts of open streams by name, with a ceiling. */
class Counter {
  readonly #open = new Map<string, number>();

  has(name: string, limit: number): boolean {
    return (this.#open.get(name) ?? 0) < limit;
  }

  add(name: string, delta: 1 | -1): void {
    const n = (this.#open.get(name) ?? 0) + delta;
    if (n <= 0) this.#open.delete(name);
    else this.#open.set(name, n);
  }
}

export class LiveStreams {
  readonly #deps: LiveStreamDeps;
  readonly #accounts = new Counter();
  readonly #keys = new Counter();
  readonly #frames = new LiveFrames();
  /** "shutdown" when the process is shutting down (its streams are cut), else the key's check passed. */
  readonly #keyChecks: GroupedChecks<"valid" | "shutdown">;

  constructor(deps: LiveStreamDeps) {
    this.#deps = deps;
    this.#keyChecks = new GroupedChecks(deps.limits.keyCheckMs);
  }

  /** Answers the live query of `resource` for `r` (a collection URL). Errors before the stream opens answer as usual. */
  async serve(ctx: Context, r: ProjectRequest, resource: ResourceModel): Promise<void> {
    const { hub, feed, tenants, keys, limits, logger } = this.#deps;
    // A response event may reshape or remove what a GET answers; changes are not run through it.
    if (r.version.scripts.responseEvents.length > 0)
      throw errors.malformed("Live queries are not available in an API version with response events");
    if (r.params.has("parent"))
      throw errors.malformed("A live query lists a whole resource; parameter 'parent' does not apply");
    const client = {
      filters: r.params.get("filter") ?? [],
      sysfilters: r.params.get("sysfilter") ?? [],
      orders: [],
      sysorders: [],
    };
    const view: KeyedView = { view: liveView(r, resource, client), key: liveViewKey(r, resource, client) };
    const account = r.project.account;
    const perAccount = (await this.#deps.accountLimit?.(account)) ?? limits.perAccount;
    // From here to the count below nothing waits, so the check and the count are one step.
    if (!this.#accounts.has(account, perAccount)) throw tooManyStreams("account");
    if (!this.#keys.has(r.key.id, limits.perKey)) throw tooManyStreams("key");
    const resume = parseStreamId(ctx.get("last-event-id") || undefined);
    const stream = feed.streamOf(r.project.storage);
    const carrier = {
      method: "GET",
      authorization: ctx.get("authorization") || undefined,
      authParams: r.params.get("auth") ?? [],
    };
    const scope = { account, project: r.project.name };
    // The streams of one key (sent the same way) for one project share its periodic check.
    const checkGroup = JSON.stringify([
      r.key.id,
      account,
      r.project.name,
      carrier.authorization !== undefined,
    ]);

    this.#accounts.add(account, 1);
    this.#keys.add(r.key.id, 1);
    const metered = this.#deps.opened?.(account, r.project.name);
    const res = ctx.res;
    ctx.respond = false;
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
      // A stream's connection is not reused once it ends (a shutting-down server waits for none).
      connection: "close",
    });
    res.flushHeaders();

    let last = "0-0";
    let live = false;
    let closed = false;
    const pending: FeedEvent[] = [];
    const end = (event?: string, data?: unknown) => {
      if (closed) return;
      closed = true;
      res.end(event ? frame(event, data) : undefined);
    };
    // The snapshot (one page, bounded by pagesize) is not held against the client: only what follows.
    const write = (text: string, bounded = true) => {
      if (closed) return;
      res.write(text);
      if (!bounded || res.writableLength <= limits.maxBufferBytes) return;
      end("cut", {
        reason: "The client reads slower than the changes come; resume with Last-Event-ID",
        last,
      });
      this.#deps.onCut?.();
    };
    // Events come in ascending order; those at or before `last` were sent already (catching up).
    const send = (events: readonly FeedEvent[]) => {
      const [oldest, newest] = [events[0], events.at(-1)];
      if (closed || !oldest || !newest || compareIds(newest.id, last) <= 0) return;
      let text = "";
      if (compareIds(oldest.id, last) > 0) text = this.#frames.batch(view, events);
      else for (const e of events) if (compareIds(e.id, last) > 0) text += this.#frames.frame(view, e) ?? "";
      last = newest.id;
      if (text) write(text);
    };
    let unsubscribe = () => {};
    const heartbeat = setInterval(() => write(": heartbeat\n\n"), limits.heartbeatMs);
    const leaveKeyChecks = this.#keyChecks.join(checkGroup, {
      check: async () => {
        if (this.#deps.shuttingDown()) return "shutdown";
        await keys.validate(carrier, scope);
        return "valid";
      },
      onResult: (result) => {
        if (result.status === "fulfilled" && result.value === "shutdown")
          end("cut", { reason: "The server is shutting down; resume with Last-Event-ID", last });
        else if (
          result.status === "rejected" &&
          result.reason instanceof ApiError &&
          result.reason.statusCode === 401
        )
          end("closed", result.reason.body(ctx.state.requestId));
      },
    });
    res.on("close", () => {
      closed = true;
      clearInterval(heartbeat);
      leaveKeyChecks();
      unsubscribe();
      this.#accounts.add(account, -1);
      this.#keys.add(r.key.id, -1);
      metered?.();
    });

    try {
      const leave = await hub.subscribe(stream, (events) => (live ? send(events) : pending.push(...events)));
      unsubscribe = leave;
      // Closed while subscribing: the close handler ran with nothing to leave yet.
      if (closed) leave();
      if (resume && !(await hub.lost(stream, resume))) {
        last = resume;
      } else {
        if (resume) write(frame("reset", { reason: "The position is no longer kept; starting afresh" }));
        last = await hub.position(stream);
        const rows = await readFromParams(tenants, r, resource, undefined, r.params);
        write(frame("snapshot", rows, last), false);
      }
      for (;;) {
        const events = await hub.history(stream, last, HISTORY_PAGE);
        send(events);
        if (events.length < HISTORY_PAGE || closed) break;
      }
      live = true;
      send(pending.splice(0));
    } catch (err) {
      logger.warn({ error: err instanceof Error ? err.name : typeof err }, "live query could not start");
      const failure = err instanceof ApiError ? err : errors.unavailable("The change feed");
      end("closed", failure.body(ctx.state.requestId));
    }
  }
}
