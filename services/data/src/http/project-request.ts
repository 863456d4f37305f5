/**
 * Resolves `/rest/<account>/<project>/<version>/<resource>[/<key>]`: the key is
 * checked first (no key, no information about what exists), then the project,
 * version and resource.
 */
import type { RouterContext } from "@koa/router";
import type { Context } from "koa";
import { auditAs, noteAudit } from "../../../../shared/admin-access/audit.ts";
import { adminCallerOfKey } from "../../../../shared/admin-access/data-access.ts";
import { errors } from "../../../../shared/errors.ts";
import { originOf } from "../../../../shared/http/forwarding.ts";
import { decodePathSegment } from "../../../../shared/http/path-segment.ts";
import type { RequestState } from "../../../../shared/http/request-context.ts";
import type { KeyRecord } from "../../../../shared/keys/key-record.ts";
import type { AdminKeyRecord, KeyValidator } from "../../../../shared/keys/key-validation.ts";
import { isValidName } from "../../../../shared/names.ts";
import { admitRequest, type RequestRateLimiter } from "../../../../shared/rate-limits/request-limits.ts";
import type { ProjectModel, ResourceModel, VersionModel } from "../domain/model/project-model.ts";
import { type Principal, principalOf } from "../domain/read/authorization.ts";
import { parseQueryString, type QueryParams } from "../domain/read/query-params.ts";
import type { Addressing } from "../domain/read/representation.ts";
import type { ProjectCache } from "../store/project-cache.ts";

export interface ProjectRequest {
  project: ProjectModel;
  version: VersionModel;
  key: KeyRecord;
  principal: Principal;
  addressing: Addressing;
  params: QueryParams;
}

export interface ProjectRequestDeps {
  keys: KeyValidator;
  projects: ProjectCache<ProjectModel>;
  publicBaseUrl: string | undefined;
  /** Request rate limits per account and per key (RATE_LIMITS); none when they are off. */
  rateLimits?: RequestRateLimiter;
}

function decodeName(raw: string | undefined): string {
  const name = decodePathSegment(raw ?? "");
  if (!isValidName(name)) throw errors.notFound(`No such account, project or version: '${name}'`);
  return name;
}

/** PUBLIC_BASE_URL wins; else the origin the client used (forwarded host/proto only from a trusted proxy). */
export function restBase(ctx: Context, publicBaseUrl: string | undefined): string {
  return `${(publicBaseUrl ?? originOf(ctx)).replace(/\/+$/, "")}/rest`;
}

/**
 * The matched route's segments as sent (still percent-encoded: this module decodes them, 400 when
 * malformed): every /rest route is `/:account/:project/:version`, then its own (`:resource/:key`,
 * `@tables/:table`). The router's `ctx.params` are decoded already, and a composite key is split
 * before its parts are decoded (column-values.ts).
 */
export function routeSegments(ctx: Context): string[] {
  return (ctx as Context & Pick<RouterContext, "captures">).captures ?? [];
}

export async function resolveProjectRequest(ctx: Context, deps: ProjectRequestDeps): Promise<ProjectRequest> {
  const params = parseQueryString(ctx.querystring);
  const [rawAccount, rawProject, rawVersion] = routeSegments(ctx);
  const account = decodeName(rawAccount);
  const projectName = decodeName(rawProject);
  const key = await deps.keys.validate(
    {
      method: ctx.method,
      authorization: ctx.get("authorization") || undefined,
      authParams: params.get("auth") ?? [],
    },
    { account, project: projectName, requestId: (ctx.state as RequestState).requestId },
  );
  // An administrator's writes go into the account's audit trail under their name (rest-routes.ts).
  if (key.admin) {
    auditAs(ctx, adminCallerOfKey(key as AdminKeyRecord), account);
    noteAudit(ctx, { accountUid: key.admin.accountUid });
  }
  if (deps.rateLimits) ctx.set(await admitRequest(deps.rateLimits, account, key.id));
  const project = await deps.projects.get(account, projectName);
  // A key minted for an earlier project of the same name is not honoured by its successor;
  // an administrator's key is for every project of its account (its incarnation checked with the key).
  if (!project || (!key.admin && project.uid !== key.projectUid)) {
    if (!project) throw errors.notFound(`No project '${projectName}' in account '${account}'`);
    throw errors.unknownKey();
  }
  if (!ctx.get("authorization") && project.definition.authentication.permitAuthParameter === false) {
    throw errors.noKey(
      "This project does not accept the key as a URL parameter; use the Authorization header",
    );
  }
  const versionName = decodeName(rawVersion);
  const version = project.versions.get(versionName);
  if (!version) throw errors.notFound(`No API version '${versionName}' in project '${projectName}'`);
  return {
    project,
    version,
    key,
    principal: principalOf(key, project),
    addressing: addressingOf(ctx, deps, account, projectName, versionName),
    params,
  };
}

function addressingOf(
  ctx: Context,
  deps: ProjectRequestDeps,
  account: string,
  project: string,
  version: string,
): Addressing {
  return { restBase: restBase(ctx, deps.publicBaseUrl), account, project, version };
}

/** A request that carries no key in any form (no Authorization header, no `auth` parameter). */
function carriesNoKey(ctx: Context, params: QueryParams): boolean {
  return ctx.headers.authorization === undefined && !params.has("auth");
}

export type PublicRequest = Pick<ProjectRequest, "project" | "version" | "addressing" | "params">;

/**
 * A keyless request to a project that publishes its API documents
 * (`apiDocs.public`): its project and version. Undefined in every other case,
 * so that the caller answers as for any request without a key (401) and a
 * keyless caller learns nothing about which projects exist.
 */
export async function resolvePublicDocsRequest(
  ctx: Context,
  deps: ProjectRequestDeps,
): Promise<PublicRequest | undefined> {
  const params = parseQueryString(ctx.querystring);
  if (!carriesNoKey(ctx, params)) return undefined;
  const [rawAccount, rawProject, rawVersion] = routeSegments(ctx).map((raw) => {
    try {
      return decodePathSegment(raw);
    } catch {
      return "";
    }
  });
  if (!isValidName(rawAccount) || !isValidName(rawProject) || !isValidName(rawVersion)) return undefined;
  const project = await deps.projects.get(rawAccount, rawProject);
  const version = project?.versions.get(rawVersion);
  if (!project || !version || project.definition.apiDocs?.public !== true) return undefined;
  return {
    project,
    version,
    addressing: addressingOf(ctx, deps, rawAccount, rawProject, rawVersion),
    params,
  };
}

/**
 * What a `:resource/:key` route names: the resource's name (decoded) and the key segment as sent
 * (still percent-encoded: column-values.ts splits a composite key before decoding its parts), or
 * none. 404 for a meta name (`@…`) no route of its own serves.
 */
export function resourceTarget(ctx: Context): { name: string; keyText: string | undefined } {
  const [, , , resource, keyText] = routeSegments(ctx);
  if (resource === undefined || resource.startsWith("@")) throw errors.notFound(`No resource at ${ctx.path}`);
  return { name: decodePathSegment(resource), keyText: keyText === "" ? undefined : keyText };
}

/** The table-based resource of a (decoded) path segment, or 404. */
export function resolveResource(version: VersionModel, name: string): ResourceModel {
  // The original product addressed tables with a data-source prefix (`main:customer`).
  const resource = version.resources.get(name) ?? version.resources.get(name.slice(name.indexOf(":") + 1));
  if (!resource) throw errors.notFound(`No resource '${name}' in version '${version.name}'`);
  return resource;
}
