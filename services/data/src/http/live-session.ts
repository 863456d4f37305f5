/**
 * One open live query (docs/realtime.md): its view of the change feed under the project's
 * definition as it is now, and the order in which it writes frames.
 *
 *  - The view (table access, row filters, columns: feed/live-view.ts) is derived again whenever the
 *    project's model may have changed (`refresh`: the project cache tells, store/project-cache.ts,
 *    and the periodic key check asks): events that arrive meanwhile are held, and are evaluated
 *    with the new view. Access lost ends the stream with `closed` and the 403 a GET answers; the
 *    project (or its account) deleted, or created again under the name, ends it with `closed` and
 *    a 404: a stream belongs to one incarnation of its project.
 *  - Events the hub hands out while the stream catches up (a snapshot, a resume) or re-derives its
 *    view are held in order, at most LIVE_MAX_HELD_EVENTS of them; past that the stream is cut
 *    (`cut`, with the position it reached), and the client resumes from there.
 *  - A view that throws on an event ends only its own stream (`closed`, 500), logged.
 */
import type { ServerResponse } from "node:http";
import { ApiError, errors } from "../../../../shared/errors.ts";
import type { KeyRecord } from "../../../../shared/keys/key-record.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { ProjectModel, ResourceModel } from "../domain/model/project-model.ts";
import { principalOf } from "../domain/read/authorization.ts";
import type { ClientQuery } from "../domain/read/query-builder.ts";
import type { QueryParams } from "../domain/read/query-params.ts";
import { planRead } from "../domain/read/reader.ts";
import type { Addressing } from "../domain/read/representation.ts";
import { readRequestFromParams } from "../domain/read/resource-read.ts";
import { compareIds } from "../feed/feed-hub.ts";
import { sseFrame as frame, type KeyedView, type LiveFrames } from "../feed/live-frames.ts";
import { type LiveScope, liveView, liveViewKey } from "../feed/live-view.ts";
import type { FeedEvent } from "../store/change-feed.ts";

/** What a session needs of the project, kept current by `refresh`. */
export interface SessionScope extends LiveScope {
  resource: ResourceModel;
}

export interface SessionSettings {
  frames: LiveFrames;
  logger: Logger;
  maxBufferBytes: number;
  maxHeldEvents: number;
  /** Called when the stream is cut because its client read too slowly or it fell too far behind. */
  onCut?: () => void;
  /** The project's model as this process has it now (null: no such project). */
  currentModel: () => Promise<ProjectModel | null>;
}

/** What the request named, to derive the view again under another model of the project. */
export interface SessionRequest {
  key: KeyRecord;
  versionName: string;
  resourceName: string;
  addressing: Addressing;
  client: ClientQuery;
  params: QueryParams;
  requestId: string | undefined;
}

/**
 * The session's view under `project`: throws the ApiError a GET would answer (404 for a version or
 * resource that is gone, 400 for a version with response events, 403 for access lost), and 400
 * for parameters that are not valid (checked before a stream opens: pagesize, order, sysorder…).
 */
export function deriveScope(project: ProjectModel, request: SessionRequest): SessionScope {
  const version = project.versions.get(request.versionName);
  if (!version) throw errors.notFound(`No API version '${request.versionName}' in project '${project.name}'`);
  // A response event may reshape or remove what a GET answers; changes are not run through it.
  if (version.scripts.responseEvents.length > 0)
    throw errors.malformed("Live queries are not available in an API version with response events");
  const resource = version.resources.get(request.resourceName);
  if (!resource) throw errors.notFound(`No resource '${request.resourceName}' in version '${version.name}'`);
  const scope: SessionScope = {
    project,
    principal: principalOf(request.key, project),
    addressing: request.addressing,
    resource,
  };
  planRead(readRequestFromParams(scope, resource, undefined, request.params));
  return scope;
}

export class LiveSession {
  readonly #settings: SessionSettings;
  readonly #request: SessionRequest;
  readonly #res: ServerResponse;
  #scope: SessionScope;
  #view: KeyedView;
  /** The position of the last event written (or of the snapshot). */
  #last = "0-0";
  /** Caught up: events from the hub go out as they come (unless a refresh holds them). */
  #live = false;
  #closed = false;
  /** Events held while catching up or refreshing, in order. */
  readonly #held: FeedEvent[] = [];
  /** Set while the snapshot is being read: a cut then waits for it (the position must come with it). */
  #snapshotPending = false;
  #cutAfterSnapshot = false;
  /** The refresh under way (a later one replaces it); undefined when the view is current. */
  #refreshing: Promise<void> | undefined;
  #refreshes = 0;

  constructor(settings: SessionSettings, request: SessionRequest, scope: SessionScope, res: ServerResponse) {
    this.#settings = settings;
    this.#request = request;
    this.#scope = scope;
    this.#view = keyedView(scope, request.client);
    this.#res = res;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get last(): string {
    return this.#last;
  }

  get scope(): SessionScope {
    return this.#scope;
  }

  /** Ends the stream, with a last event when given. */
  end(event?: string, data?: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#res.end(event ? frame(event, data) : undefined);
  }

  /** Ends the stream with `closed` and the error's body. */
  fail(error: ApiError): void {
    this.end("closed", error.body(this.#request.requestId));
  }

  /** Cuts the stream at the position it reached: the client resumes from there. */
  cut(reason: string): void {
    if (this.#snapshotPending) {
      this.#cutAfterSnapshot = true;
      this.#held.length = 0;
      return;
    }
    this.end("cut", { reason, last: this.#last });
    this.#settings.onCut?.();
  }

  /** Writes `text`; past the buffer bound (`bounded`: not the snapshot) the stream is cut. */
  write(text: string, bounded = true): void {
    if (this.#closed) return;
    this.#res.write(text);
    if (bounded && this.#res.writableLength > this.#settings.maxBufferBytes)
      this.cut("The client reads slower than the changes come; resume with Last-Event-ID");
  }

  /** The hub's listener: a batch of events, in order. */
  deliver(events: readonly FeedEvent[]): void {
    if (this.#closed) return;
    if (this.#live && !this.#refreshing) this.#send(events);
    else this.#hold(events);
  }

  /** Continues after `position` (a resume): no snapshot. */
  resumeAt(position: string): void {
    this.#last = position;
  }

  /** Writes the snapshot read at `position` (`read` runs with the current view's scope). */
  async snapshot(position: string, read: (scope: SessionScope) => Promise<unknown>): Promise<void> {
    this.#last = position;
    this.#snapshotPending = true;
    try {
      await this.#refreshing;
      const rows = await read(this.#scope);
      this.write(frame("snapshot", rows, position), false);
    } finally {
      this.#snapshotPending = false;
    }
    if (this.#cutAfterSnapshot)
      this.cut("The stream fell behind while it started; resume with Last-Event-ID");
  }

  /** Sends a page of the feed's history (catching up), with the view as it is once any refresh is done. */
  async catchUp(events: readonly FeedEvent[]): Promise<void> {
    await this.#refreshing;
    this.#send(events);
  }

  /** Caught up: what was held goes out, and events from now on as they come. */
  async goLive(): Promise<void> {
    await this.#refreshing;
    this.#live = true;
    this.#flush();
  }

  /**
   * Derives the view again under the project's model as it is now, before any later event: events
   * wait meanwhile. Ends the stream when the key may no longer read, or the project is gone.
   */
  refresh(): Promise<void> {
    const turn = ++this.#refreshes;
    const done = this.#settings
      .currentModel()
      .then(
        (model) => {
          if (turn === this.#refreshes) this.#apply(model);
        },
        (err: unknown) => {
          if (turn !== this.#refreshes) return;
          this.#settings.logger.warn(
            { error: err instanceof Error ? err.name : typeof err },
            "live query could not reload its project",
          );
          this.fail(err instanceof ApiError ? err : errors.unavailable("The project's definition"));
        },
      )
      .finally(() => {
        if (turn !== this.#refreshes) return;
        this.#refreshing = undefined;
        if (this.#live) this.#flush();
      });
    this.#refreshing = done;
    return done;
  }

  /** Refreshes when the project's model is not the one the view was derived from. */
  async checkModel(): Promise<void> {
    const model = await this.#settings.currentModel().catch(() => undefined);
    if (model !== undefined && model !== this.#scope.project && !this.#closed) await this.refresh();
  }

  #apply(model: ProjectModel | null): void {
    if (this.#closed || model === this.#scope.project) return;
    const before = this.#scope.project;
    if (!model || model.uid !== before.uid) {
      this.fail(errors.notFound(`Project '${before.name}' of account '${before.account}' was deleted`));
      return;
    }
    try {
      this.#scope = deriveScope(model, this.#request);
      this.#view = keyedView(this.#scope, this.#request.client);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      this.fail(err);
    }
  }

  #hold(events: readonly FeedEvent[]): void {
    if (this.#held.length + events.length > this.#settings.maxHeldEvents) {
      this.cut("The stream fell behind the changes while it caught up; resume with Last-Event-ID");
      return;
    }
    this.#held.push(...events);
  }

  #flush(): void {
    if (this.#held.length > 0) this.#send(this.#held.splice(0));
  }

  /** Writes the frames of the events after the last position written (catching up, some may be older). */
  #send(events: readonly FeedEvent[]): void {
    const [oldest, newest] = [events[0], events.at(-1)];
    if (this.#closed || !oldest || !newest || compareIds(newest.id, this.#last) <= 0) return;
    const { frames } = this.#settings;
    let text = "";
    try {
      if (compareIds(oldest.id, this.#last) > 0) text = frames.batch(this.#view, events);
      else
        for (const e of events)
          if (compareIds(e.id, this.#last) > 0) text += frames.frame(this.#view, e) ?? "";
    } catch (err) {
      this.#settings.logger.error(
        {
          error: err instanceof Error ? err.name : typeof err,
          stack: err instanceof Error ? err.stack : undefined,
        },
        "a live query's view failed on an event; its stream ends",
      );
      this.fail(errors.internal());
      return;
    }
    this.#last = newest.id;
    if (text) this.write(text);
  }
}

function keyedView(scope: SessionScope, client: ClientQuery): KeyedView {
  return { view: liveView(scope, scope.resource, client), key: liveViewKey(scope, scope.resource, client) };
}
