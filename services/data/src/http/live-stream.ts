/**
 * Live queries (docs/realtime.md): a GET of a table-based resource with
 * `Accept: text/event-stream` answers Server-Sent Events: the first page as a
 * GET would answer it (`snapshot`), then every change of the project's change
 * feed that the key may see (`change`, one object, `id:` its feed position;
 * `leave` when an update makes a row it saw stop matching), filtered per event
 * by feed/live-view.ts; one open stream is an http/live-session.ts. Streams whose views have the same
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
 *  - A definition change re-derives every open stream's view before its next event
 *    (the project cache tells), and the periodic check asks for the current model too.
 *  - Content negotiation is Koa's (`ctx.accepts`); every parameter is checked before
 *    the stream opens (a plain 400).
 */
import type { Context } from "koa";
import { ApiError, ErrorCode, errors } from "../../../../shared/errors.ts";
import type { KeyValidator } from "../../../../shared/keys/key-validation.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { ProjectModel, ResourceModel } from "../domain/model/project-model.ts";
import { readResource } from "../domain/read/reader.ts";
import { readRequestFromParams } from "../domain/read/resource-read.ts";
import { type FeedHub, parseStreamId } from "../feed/feed-hub.ts";
import { sseFrame as frame, LiveFrames } from "../feed/live-frames.ts";
import type { ChangeFeed } from "../store/change-feed.ts";
import type { ProjectCache } from "../store/project-cache.ts";
import type { TenantRows } from "../store/tenant-rows.ts";
import { GroupedChecks } from "./grouped-checks.ts";
import { deriveScope, LiveSession, type SessionRequest, type SessionScope } from "./live-session.ts";
import type { ProjectRequest } from "./project-request.ts";

export interface LiveLimits {
  perAccount: number;
  perKey: number;
  heartbeatMs: number;
  keyCheckMs: number;
  maxBufferBytes: number;
  /** Events a stream holds back while it catches up or re-derives its view, before it is cut. */
  maxHeldEvents: number;
}

export interface LiveStreamDeps {
  hub: FeedHub;
  feed: ChangeFeed;
  tenants: TenantRows;
  keys: KeyValidator;
  /** The compiled projects: a stream's view follows its project's definition. */
  projects: ProjectCache<ProjectModel>;
  limits: LiveLimits;
  logger: Logger;
  /** Called when a stream is cut (a slow client, or one that fell behind). */
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

/** The answers a collection GET can give; JSON first: any type (`*` + `/*`) and no Accept at all mean a page. */
const LIST_TYPES = ["application/json", "text/event-stream"];

/**
 * Whether the client asks for the event stream rather than a JSON (or other) answer: the media
 * type Koa's content negotiation prefers among those a collection GET offers (q-values honoured:
 * `text/event-stream;q=0` is a refusal).
 */
export function wantsEventStream(ctx: Context): boolean {
  return ctx.accepts(LIST_TYPES) === "text/event-stream";
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

/** What every stream of this process shares: the open counts, the frames, the key checks, the sessions by project. */
interface Shared {
  deps: LiveStreamDeps;
  accounts: Counter;
  keys: Counter;
  frames: LiveFrames;
  /** "shutdown" when the process is shutting down (its streams are cut), else the key's check passed. */
  keyChecks: GroupedChecks<"valid" | "shutdown">;
  /** The open sessions by project (`<account>/<project>`), told when its model may have changed. */
  byProject: Map<string, Set<LiveSession>>;
}

export class LiveStreams {
  readonly #shared: Shared;

  constructor(deps: LiveStreamDeps) {
    const byProject = new Map<string, Set<LiveSession>>();
    this.#shared = {
      deps,
      accounts: new Counter(),
      keys: new Counter(),
      frames: new LiveFrames(),
      keyChecks: new GroupedChecks(deps.limits.keyCheckMs),
      byProject,
    };
    deps.projects.watch((account, project) => {
      for (const session of byProject.get(`${account}/${project}`) ?? []) void session.refresh();
    });
  }

  /** Answers the live query of `resource` for `r` (a collection URL). Errors before the stream opens answer as usual. */
  async serve(ctx: Context, r: ProjectRequest, resource: ResourceModel): Promise<void> {
    const { accounts, keys, deps } = this.#shared;
    if (r.params.has("parent"))
      throw errors.malformed("A live query lists a whole resource; parameter 'parent' does not apply");
    const request: SessionRequest = {
      key: r.key,
      versionName: r.version.name,
      resourceName: resource.name,
      addressing: r.addressing,
      client: {
        filters: r.params.get("filter") ?? [],
        sysfilters: r.params.get("sysfilter") ?? [],
        orders: [],
        sysorders: [],
      },
      params: r.params,
      requestId: ctx.state.requestId,
    };
    // Every parameter is checked before the stream opens: a bad one is a plain 400.
    const scope = deriveScope(r.project, request);
    const account = r.project.account;
    const perAccount = (await deps.accountLimit?.(account)) ?? deps.limits.perAccount;
    // From here to the count (LiveConnection's constructor) nothing waits, so the check and the count are one step.
    if (!accounts.has(account, perAccount)) throw tooManyStreams("account");
    if (!keys.has(r.key.id, deps.limits.perKey)) throw tooManyStreams("key");
    await new LiveConnection(this.#shared, ctx, r, request, scope).run();
  }
}

/**
 * One open stream, from its headers to its close: counted while it is open, its session told of
 * its project's changes, a heartbeat, the key's periodic check, and on close all of it undone.
 */
class LiveConnection {
  readonly #shared: Shared;
  readonly #r: ProjectRequest;
  readonly #session: LiveSession;
  readonly #stream: string;
  readonly #resume: string | null;
  readonly #projectId: string;
  readonly #sessions: Set<LiveSession>;
  readonly #heartbeat: NodeJS.Timeout;
  readonly #leaveKeyChecks: () => void;
  readonly #metered: (() => void) | undefined;
  #unsubscribe = () => {};

  constructor(shared: Shared, ctx: Context, r: ProjectRequest, request: SessionRequest, scope: SessionScope) {
    const { deps } = shared;
    const account = r.project.account;
    this.#shared = shared;
    this.#r = r;
    this.#resume = parseStreamId(ctx.get("last-event-id") || undefined);
    this.#stream = deps.feed.streamOf(r.project.storage);
    shared.accounts.add(account, 1);
    shared.keys.add(r.key.id, 1);
    this.#metered = deps.opened?.(account, r.project.name);
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

    const session = new LiveSession(
      {
        frames: shared.frames,
        logger: deps.logger,
        maxBufferBytes: deps.limits.maxBufferBytes,
        maxHeldEvents: deps.limits.maxHeldEvents,
        onCut: deps.onCut,
        currentModel: () => deps.projects.get(account, r.project.name),
      },
      request,
      scope,
      res,
    );
    this.#session = session;
    this.#projectId = `${account}/${r.project.name}`;
    this.#sessions = shared.byProject.get(this.#projectId) ?? new Set();
    shared.byProject.set(this.#projectId, this.#sessions);
    this.#sessions.add(session);
    this.#heartbeat = setInterval(() => session.write(": heartbeat\n\n"), deps.limits.heartbeatMs);
    this.#leaveKeyChecks = this.#joinKeyChecks(ctx);
    res.on("close", () => this.#close());
  }

  /** The periodic check of the stream's key, shared by the streams of one key (sent the same way) for one project. */
  #joinKeyChecks(ctx: Context): () => void {
    const { deps, keyChecks } = this.#shared;
    const r = this.#r;
    const session = this.#session;
    const carrier = {
      method: "GET",
      authorization: ctx.get("authorization") || undefined,
      authParams: r.params.get("auth") ?? [],
    };
    const keyScope = { account: r.project.account, project: r.project.name };
    const checkGroup = JSON.stringify([
      r.key.id,
      r.project.account,
      r.project.name,
      carrier.authorization !== undefined,
    ]);
    return keyChecks.join(checkGroup, {
      check: async () => {
        if (deps.shuttingDown()) return "shutdown";
        await deps.keys.validate(carrier, keyScope);
        return "valid";
      },
      onResult: (result) => {
        if (result.status === "fulfilled" && result.value === "shutdown")
          session.end("cut", {
            reason: "The server is shutting down; resume with Last-Event-ID",
            last: session.last,
          });
        else if (result.status === "fulfilled") void session.checkModel();
        else if (result.reason instanceof ApiError && result.reason.statusCode === 401)
          session.fail(result.reason);
      },
    });
  }

  #close(): void {
    const { accounts, keys, byProject } = this.#shared;
    this.#session.end();
    clearInterval(this.#heartbeat);
    this.#leaveKeyChecks();
    this.#unsubscribe();
    this.#sessions.delete(this.#session);
    if (this.#sessions.size === 0 && byProject.get(this.#projectId) === this.#sessions)
      byProject.delete(this.#projectId);
    accounts.add(this.#r.project.account, -1);
    keys.add(this.#r.key.id, -1);
    this.#metered?.();
  }

  /** Subscribes, sends the snapshot (or resumes), catches up with the feed's history, then goes live. */
  async run(): Promise<void> {
    const { hub, tenants, logger } = this.#shared.deps;
    const session = this.#session;
    const stream = this.#stream;
    const resume = this.#resume;
    const params = this.#r.params;
    try {
      const leave = await hub.subscribe(stream, (events) => session.deliver(events));
      this.#unsubscribe = leave;
      // Closed while subscribing: the close handler ran with nothing to leave yet.
      if (session.closed) leave();
      if (resume && !(await hub.lost(stream, resume))) {
        session.resumeAt(resume);
      } else {
        if (resume)
          session.write(frame("reset", { reason: "The position is no longer kept; starting afresh" }));
        await session.snapshot(await hub.position(stream), (current) =>
          readResource(tenants, readRequestFromParams(current, current.resource, undefined, params)),
        );
      }
      for (;;) {
        if (session.closed) break;
        const events = await hub.history(stream, session.last, HISTORY_PAGE);
        await session.catchUp(events);
        if (events.length < HISTORY_PAGE) break;
      }
      await session.goLive();
    } catch (err) {
      logger.warn({ error: err instanceof Error ? err.name : typeof err }, "live query could not start");
      session.fail(err instanceof ApiError ? err : errors.unavailable("The change feed"));
    }
  }
}
