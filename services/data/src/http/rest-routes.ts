/**
 * The data API under /rest: meta endpoints (@heartbeat, @license without a key;
 * @tables, @resources with one) and GET/POST/PUT/DELETE of resources.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import { errors } from "../../../../shared/errors.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import type { Logger } from "../../../../shared/logger.ts";
import type { ResourceModel } from "../domain/project-model.ts";
import { readResource } from "../domain/reader.ts";
import { collectionHref } from "../domain/representation.ts";
import { parseKeySegment } from "../domain/values.ts";
import { executeWrite, type PlanExtension } from "../domain/writer.ts";
import type { TenantStore } from "../store/tenant-store.ts";
import { describeResource, describeTable, LICENSE } from "./meta-descriptions.ts";
import {
  type ProjectRequest,
  type ProjectRequestDeps,
  resolveProjectRequest,
  resolveResource,
} from "./project-request.ts";
import { encodeQuery, flag, intParam, single } from "./query-params.ts";

export interface RestDeps extends ProjectRequestDeps {
  tenants: TenantStore;
  logger: Logger;
  maxBodyBytes: number;
  planExtension?: PlanExtension;
}

export const PAGESIZE_DEFAULT = 20;
export const PAGESIZE_MAX = 5000;

export function restRouter(deps: RestDeps): Router {
  const router = new Router({ prefix: "/rest" });

  router.get("/:account/:project/:version/@heartbeat", (ctx) => {
    ctx.body = { status: "ok", time: new Date().toISOString() };
  });
  router.get("/:account/:project/:version/@license", (ctx) => {
    ctx.body = LICENSE;
  });
  router.get("/:account/:project/:version/@tables", async (ctx) => {
    const r = await resolveProjectRequest(ctx, deps);
    ctx.body = [...r.project.tables.values()].map((t) => describeTable(r, t, false));
  });
  router.get("/:account/:project/:version/@tables/:table", async (ctx) => {
    const r = await resolveProjectRequest(ctx, deps);
    const name = decodeURIComponent(r.rest[1] ?? "");
    // As for resources, a data-source prefix (`main:customer`) is accepted.
    const table = r.project.tables.get(name) ?? r.project.tables.get(name.slice(name.indexOf(":") + 1));
    if (!table) throw errors.notFound("No such table");
    ctx.body = describeTable(r, table, true);
  });
  router.get("/:account/:project/:version/@resources", async (ctx) => {
    const r = await resolveProjectRequest(ctx, deps);
    ctx.body = [...r.version.resources.values()]
      .filter((res) => !res.isTable)
      .map((res) => describeResource(r, res));
  });

  const handle = async (ctx: Context) => {
    const r = await resolveProjectRequest(ctx, deps);
    if (r.rest.length > 2 || r.rest[0]!.startsWith("@")) throw errors.notFound(`No resource at ${ctx.path}`);
    const resource = resolveResource(r.version, r.rest[0]!);
    const key =
      r.rest[1] !== undefined && r.rest[1] !== "" ? parseKeySegment(resource.table, r.rest[1]) : undefined;
    switch (ctx.method) {
      case "GET":
        ctx.body = await read(r, resource, key);
        return;
      case "POST":
        if (key) throw errors.methodNotAllowed("POST to an object's URL");
        return write(ctx, r, resource, "POST", await readJsonBody(ctx, deps.maxBodyBytes), undefined);
      case "PUT":
        return write(ctx, r, resource, "PUT", await readJsonBody(ctx, deps.maxBodyBytes), key);
      case "DELETE":
        return write(ctx, r, resource, "DELETE", undefined, key);
      default:
        throw errors.methodNotAllowed(ctx.method);
    }
  };
  router.all("/:account/:project/:version/:resource", handle);
  router.all("/:account/:project/:version/:resource/:key", handle);

  async function read(r: ProjectRequest, resource: ResourceModel, key: Record<string, unknown> | undefined) {
    // Named filters and sorts of the original product (`lac get -g/-t`) do not exist here;
    // ignoring them would answer a narrower question with more rows than asked for.
    for (const name of ["userfilter", "userorder"]) {
      if (r.params.has(name))
        throw errors.badFilter(`Parameter '${name}' (named filters and sorts) is not supported`);
    }
    const pagesize = intParam(r.params, "pagesize", PAGESIZE_DEFAULT, 1, PAGESIZE_MAX);
    const offset = intParam(r.params, "offset", 0, 0, 1_000_000_000);
    const pagekey = decodePagekey(single(r.params, "pagekey"));
    const kept = [...r.params.entries()]
      .filter(([name]) => !["offset", "pagekey", "auth"].includes(name))
      .flatMap(([name, values]) => values.map((v): [string, string] => [name, v]));
    return readResource(deps.tenants, {
      project: r.project,
      principal: r.principal,
      resource,
      addressing: r.addressing,
      key,
      client: {
        filters: r.params.get("filter") ?? [],
        sysfilters: r.params.get("sysfilter") ?? [],
        orders: r.params.get("order") ?? [],
        sysorders: r.params.get("sysorder") ?? [],
      },
      pagesize,
      offset,
      pagekey,
      nometa: flag(r.params, "nometa"),
      nextBatchUrl: (nextOffset, nextKey) => {
        const query: [string, string][] = [...kept, ["offset", String(nextOffset)]];
        if (nextKey) query.push(["pagekey", Buffer.from(JSON.stringify(nextKey)).toString("base64url")]);
        return `${collectionHref(r.addressing, resource.name)}?${encodeQuery(query)}`;
      },
    });
  }

  async function write(
    ctx: Context,
    r: ProjectRequest,
    resource: ResourceModel,
    method: "POST" | "PUT" | "DELETE",
    body: unknown,
    urlKey: Record<string, unknown> | undefined,
  ) {
    const result = await executeWrite(
      deps.tenants,
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
      },
      deps.logger,
      deps.planExtension,
    );
    const statusCode = method === "POST" ? 201 : 200;
    ctx.status = statusCode;
    const body_: Record<string, unknown> = { statusCode };
    if (single(r.params, "txsummary") !== "false") body_.txsummary = result.txsummary;
    if (flag(r.params, "rulesummary")) body_.rulesummary = result.rulesummary ?? [];
    ctx.body = body_;
  }

  return router;
}

function decodePagekey(text: string | undefined): unknown[] | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.every((v) => ["string", "number", "boolean"].includes(typeof v)))
      return value;
  } catch {
    // fall through
  }
  throw errors.malformed("Parameter 'pagekey' is not a position this server produced");
}
