/**
 * The data API under /rest: meta endpoints (@heartbeat, @license without a key;
 * @tables, @resources, @docs with one) and GET/POST/PUT/DELETE of resources.
 * GET answers come as JSON, "JSON Object", CSV or XML (response-format.ts);
 * writes and @docs only as JSON.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import {
  type AuditSink,
  auditedWhenAdmin,
  isAudited,
  noteAudit,
} from "../../../../shared/admin-access/audit.ts";
import { ApiError, errors } from "../../../../shared/errors.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import { decodePathSegment } from "../../../../shared/http/path-segment.ts";
import type { Logger } from "../../../../shared/logger.ts";
import { parseKeySegment } from "../domain/model/column-values.ts";
import type { ResourceModel } from "../domain/model/project-model.ts";
import { type JavaScriptResourceModel, requireCallable } from "../domain/model/script-model.ts";
import { missingIndex } from "../domain/read/index-hint.ts";
import { encodeQuery, parseQueryString, type QueryParams, single } from "../domain/read/query-params.ts";
import { collectionHref } from "../domain/read/representation.ts";
import {
  pageWindow,
  queryWithout,
  readFromParams,
  readRequestFromParams,
} from "../domain/read/resource-read.ts";
import { changeSummary } from "../domain/write/change-summary.ts";
import { renderWriteAnswer, writeAnswerParts } from "../domain/write/write-answer.ts";
import { executeWrite, type PlanExtension } from "../domain/write/writer.ts";
import type { ScriptRequest, ScriptRunner } from "../scripts/script-runner.ts";
import type { WriteLoop, WriteQuota } from "../store/tenant-rows.ts";
import type { TenantStore } from "../store/tenant-store.ts";
import type { RequestKind } from "../usage/usage-meter.ts";
import { callerAccess, keyAccess } from "./access-view.ts";
import { answerCsvColumns } from "./answer-csv-columns.ts";
import { apiDocument, docsFormat } from "./api-docs.ts";
import { resourceCsvColumns } from "./csv-columns.ts";
import { type LiveStreams, wantsEventStream } from "./live-stream.ts";
import {
  describeJavaScriptResource,
  describeResource,
  describeTable,
  LICENSE,
  visibleColumns,
} from "./meta-descriptions.ts";
import {
  type ProjectRequest,
  type ProjectRequestDeps,
  type PublicRequest,
  resolveProjectRequest,
  resolvePublicDocsRequest,
  resolveResource,
  resourceTarget,
  routeSegments,
} from "./project-request.ts";
import { formatOf, requireJson, respond } from "./response-format.ts";

export interface RestDeps extends ProjectRequestDeps {
  tenants: TenantStore;
  writeLoop: WriteLoop;
  logger: Logger;
  maxBodyBytes: number;
  planExtension?: PlanExtension;
  /** JavaScript resources and request/response events. */
  scripts: ScriptRunner;
  /** The `Authorization` scheme words accepted (for the API document). */
  authSchemes: string[];
  /** Live queries: a GET with `Accept: text/event-stream` (absent when the change feed is off). */
  live?: LiveStreams;
  /** Where account administrators' writes are recorded (their keys open the data API too). */
  audit: AuditSink;
  /** What each account's writes are held to by its plan (none: no limits). */
  writeQuota?: (account: string) => Promise<WriteQuota>;
  /** Counts each request of an account, by project, kind and status (none: metering is off). */
  meterRequest?: (account: string, project: string, kind: RequestKind, status: number) => void;
}

/** Where a request that reached a project is counted (set once its key was accepted for it). */
interface MeteredState {
  metered?: { account: string; project: string; kind: RequestKind };
}

/** The response header of a read no index serves: the index that would, as `table(column)`. */
export const MISSING_INDEX_HEADER = "Tessera-Missing-Index";

const column = (name: string) => ({ header: name, path: [name] });
const TABLE_LIST_CSV = ["name", "prefix", "entity"].map(column);
const RESOURCE_LIST_CSV = ["name", "resource_type", "apiVersion", "table"].map(column);

export function restRouter(deps: RestDeps): Router {
  const router = new Router({ prefix: "/rest" });

  router.get("/:account/:project/:version/@heartbeat", (ctx) => {
    const format = formatOf(ctx, parseQueryString(ctx.querystring));
    respond(ctx, format, { status: "ok", time: new Date().toISOString() });
  });
  router.get("/:account/:project/:version/@license", (ctx) => {
    respond(ctx, formatOf(ctx, parseQueryString(ctx.querystring)), LICENSE);
  });
  // The tables (and of each, the columns) the key's roles grant any access to; all with an apiDocs role.
  router.get("/:account/:project/:version/@tables", async (ctx) => {
    const r = await resolveProjectRequest(ctx, deps);
    const format = formatOf(ctx, r.params, r.version);
    const view = callerAccess(r.project, r.principal);
    respond(
      ctx,
      format,
      [...r.project.tables.values()]
        .filter((t) => visibleColumns(view, t) !== undefined)
        .map((t) => describeTable(r, t, false)),
      { csvColumns: () => TABLE_LIST_CSV, version: r.version },
    );
  });
  router.get("/:account/:project/:version/@tables/:table", async (ctx) => {
    const r = await resolveProjectRequest(ctx, deps);
    const [, , , tableSegment = ""] = routeSegments(ctx);
    const name = decodePathSegment(tableSegment);
    // As for resources, a data-source prefix (`main:customer`) is accepted.
    const table = r.project.tables.get(name) ?? r.project.tables.get(name.slice(name.indexOf(":") + 1));
    if (!table) throw errors.notFound("No such table");
    const view = callerAccess(r.project, r.principal);
    if (visibleColumns(view, table) === undefined)
      throw errors.forbidden(`The key's roles do not allow any access to '${table.name}'`);
    respond(ctx, formatOf(ctx, r.params, r.version), describeTable(r, table, true, view), {
      version: r.version,
    });
  });
  router.get("/:account/:project/:version/@resources", async (ctx) => {
    const r = await resolveProjectRequest(ctx, deps);
    const format = formatOf(ctx, r.params, r.version);
    const resources = [
      ...[...r.version.resources.values()]
        .filter((res) => !res.isTable)
        .map((res) => describeResource(r, res)),
      ...[...r.version.scripts.resources.values()].map((res) => describeJavaScriptResource(r, res)),
    ];
    respond(ctx, format, resources, { csvColumns: () => RESOURCE_LIST_CSV, version: r.version });
  });
  router.get("/:account/:project/:version/@docs", async (ctx) => {
    // Without a key only when the project publishes its documents; the key's view otherwise.
    const r: PublicRequest & Partial<Pick<ProjectRequest, "principal">> =
      (await resolvePublicDocsRequest(ctx, deps)) ?? (await resolveProjectRequest(ctx, deps));
    requireJson(ctx, r.params, "@docs");
    ctx.vary("Accept");
    const format = docsFormat(single(r.params, "format"), (types) => ctx.accepts(types));
    // application/json, not the OpenAPI media type: `lac schema openapi` parses only the former.
    ctx.type = "application/json";
    ctx.body = apiDocument({
      project: r.project,
      version: r.version,
      addressing: r.addressing,
      principal: r.principal,
      authSchemes: deps.authSchemes,
      format,
    });
  });

  // Writes made with an account administrator's key are audited; other keys' are not.
  const handle = async (ctx: Context) => {
    try {
      await auditedWhenAdmin(ctx, deps.audit, () => handleResource(ctx));
      meter(ctx, ctx.status);
    } catch (err) {
      meter(ctx, err instanceof ApiError ? err.statusCode : 500);
      throw err;
    }
  };
  /** Counts a request whose key opened the project; nobody else's requests reach an account's usage. */
  const meter = (ctx: Context, status: number) => {
    const metered = (ctx.state as MeteredState).metered;
    if (metered) deps.meterRequest?.(metered.account, metered.project, metered.kind, status);
  };
  const handleResource = async (ctx: Context) => {
    const r = await resolveProjectRequest(ctx, deps);
    const kind = ctx.method !== "GET" ? "write" : deps.live && wantsEventStream(ctx) ? "stream" : "read";
    (ctx.state as MeteredState).metered = { account: r.project.account, project: r.project.name, kind };
    const { name, keyText } = resourceTarget(ctx);
    const scripted = r.version.scripts.resources.get(name);
    if (scripted) return javascriptResource(ctx, r, scripted, keyText);
    const resource = resolveResource(r.version, name);
    const key = keyText !== undefined ? parseKeySegment(resource.table, keyText) : undefined;
    const request = scriptRequest(ctx.method, resource.name, keyText, r.params);
    if (ctx.method === "GET") {
      const format = formatOf(ctx, r.params, r.version);
      await deps.scripts.requestEvents(r, request);
      // A collection's answer depends on Accept (a page, or a live query's stream).
      if (deps.live && !key) ctx.vary("Accept");
      if (deps.live && wantsEventStream(ctx)) {
        if (key) throw errors.malformed("A live query takes a collection URL, not an object's");
        return deps.live.serve(ctx, r, resource);
      }
      const page = await readFromParams(deps.tenants, r, resource, key, r.params);
      if (!key) {
        // A filter or order no index serves reads the whole table: say which index would serve it.
        const hint = missingIndex(resource, readRequestFromParams(r, resource, key, r.params).client);
        if (hint) ctx.set(MISSING_INDEX_HEADER, hint);
      }
      const answer = await deps.scripts.responseEvents(r, request, { statusCode: 200, body: page }, false);
      respond(ctx, format, answer.body, {
        csvColumns: () =>
          answer.changed
            ? answerCsvColumns(answer.body, resource.name)
            : resourceCsvColumns(resource, keyAccess(r.project, r.principal)),
        version: r.version,
      });
      return;
    }
    if (["POST", "PUT", "DELETE"].includes(ctx.method)) requireJson(ctx, r.params, "A write");
    switch (ctx.method) {
      case "POST":
        if (key) throw errors.methodNotAllowed("POST to an object's URL");
        request.body = await readJsonBody(ctx, deps.maxBodyBytes);
        return write(ctx, r, resource, "POST", request, undefined);
      case "PUT":
        request.body = await readJsonBody(ctx, deps.maxBodyBytes);
        return write(ctx, r, resource, "PUT", request, key);
      case "DELETE":
        return write(ctx, r, resource, "DELETE", request, key);
      default:
        throw errors.methodNotAllowed(ctx.method);
    }
  };
  router.all("/:account/:project/:version/:resource", handle);
  router.all("/:account/:project/:version/:resource/:key", handle);

  /** A GET of a JavaScript resource: the events around the code's answer. Other methods are 405. */
  async function javascriptResource(
    ctx: Context,
    r: ProjectRequest,
    resource: JavaScriptResourceModel,
    keyText: string | undefined,
  ) {
    requireCallable(resource, r.principal);
    if (ctx.method !== "GET") throw errors.methodNotAllowed(`${ctx.method} on a JavaScript resource`);
    const format = formatOf(ctx, r.params, r.version);
    const request = scriptRequest("GET", resource.name, keyText, r.params);
    const { pagesize, offset } = pageWindow(r.params);
    request.pagesize = pagesize;
    request.offset = offset;
    const kept = queryWithout(r.params, ["offset", "auth"]);
    kept.push(["offset", String(request.offset + request.pagesize)]);
    const self = collectionHref(r.addressing, resource.name) + (keyText === undefined ? "" : `/${keyText}`);
    request.nextBatch = `${self}?${encodeQuery(kept)}`;
    await deps.scripts.requestEvents(r, request);
    const value = await deps.scripts.resource(r, resource, request);
    const answer = await deps.scripts.responseEvents(r, request, { statusCode: 200, body: value }, false);
    respond(ctx, format, answer.body, {
      csvColumns: () => answerCsvColumns(answer.body, resource.name),
      version: r.version,
    });
  }

  async function write(
    ctx: Context,
    r: ProjectRequest,
    resource: ResourceModel,
    method: "POST" | "PUT" | "DELETE",
    request: ScriptRequest,
    urlKey: Record<string, unknown> | undefined,
  ) {
    const body = await deps.scripts.requestEvents(r, request);
    request.body = body;
    const result = await executeWrite(
      deps.tenants,
      deps.writeLoop,
      {
        project: r.project,
        principal: r.principal,
        resource,
        addressing: r.addressing,
        method,
        body,
        urlKey,
        checksum: single(r.params, "checksum"),
        ignoreDeleted: r.params.has("ignoredeleted") && single(r.params, "ignoredeleted") !== "false",
        quota: await deps.writeQuota?.(r.project.account),
      },
      deps.planExtension,
    );
    // Only an administrator's writes are audited: the summary is made for those alone.
    if (isAudited(ctx))
      noteAudit(ctx, {
        summary: `${r.project.name}/${r.version.name}: ${changeSummary(result.plan.changes)}`,
      });
    const answer = renderWriteAnswer(result, writeAnswerParts(r.params));
    const final = await deps.scripts.responseEvents(r, request, answer, true);
    ctx.status = answer.statusCode;
    ctx.body = final.body;
  }

  return router;
}

/** The request as scripts see it: no `auth` parameter (a key), the key segment decoded. */
function scriptRequest(
  method: string,
  resource: string,
  keyText: string | undefined,
  params: QueryParams,
): ScriptRequest {
  return {
    method,
    resource,
    key: keyText === undefined ? null : decodePathSegment(keyText),
    // fromEntries: every name an own property, `__proto__` included.
    params: Object.fromEntries(
      [...params]
        .filter(([name]) => name !== "auth")
        .map(([name, values]) => {
          const [only] = values;
          return [name, values.length === 1 && only !== undefined ? only : [...values]];
        }),
    ),
  };
}
