/**
 * A GET of a table-based resource from its query parameters: the parameters
 * checked the way the data API documents them, the page read by the reader
 * with the caller's roles, and `next_batch` URLs that repeat the request.
 * Used by the REST routes and by the read API of JavaScript resources and
 * events (`tessera.get`), so that both read exactly the same way.
 */
import { errors } from "../../../../../shared/errors.ts";
import type { TenantRows } from "../../store/tenant-rows.ts";
import type { ProjectModel, ResourceModel } from "../model/project-model.ts";
import type { Principal } from "./authorization.ts";
import {
  encodeQuery,
  flag,
  intParam,
  PAGESIZE_DEFAULT,
  PAGESIZE_MAX,
  type QueryParams,
  single,
} from "./query-params.ts";
import { parseParentKey, type ReadRequest, readResource } from "./reader.ts";
import { type Addressing, collectionHref, type WireObject } from "./representation.ts";

/** Who reads, in which project, and the URLs the answer's links are built on. */
export interface ReadScope {
  project: ProjectModel;
  principal: Principal;
  addressing: Addressing;
}

/** Parameters that name a page rather than the question: `next_batch` sets them anew. */
const POSITION_PARAMETERS = ["offset", "pagekey", "auth"];

/** The page asked for: `pagesize` (1 to PAGESIZE_MAX, PAGESIZE_DEFAULT when absent) and `offset` (0 when absent). */
export function pageWindow(params: QueryParams): { pagesize: number; offset: number } {
  const pagesize = intParam(params, "pagesize", PAGESIZE_DEFAULT, 1, PAGESIZE_MAX);
  const offset = intParam(params, "offset", 0, 0, 1_000_000_000);
  return { pagesize, offset };
}

export async function readFromParams(
  tenants: TenantRows,
  scope: ReadScope,
  resource: ResourceModel,
  key: Record<string, unknown> | undefined,
  params: QueryParams,
): Promise<WireObject[]> {
  return readResource(tenants, readRequestFromParams(scope, resource, key, params));
}

/**
 * The read a GET's parameters ask for, each parameter checked (400 for one that is not valid; the
 * filters and orders are compiled by the reader's planRead).
 */
export function readRequestFromParams(
  scope: ReadScope,
  resource: ResourceModel,
  key: Record<string, unknown> | undefined,
  params: QueryParams,
): ReadRequest {
  // Named filters and sorts of the original product (`lac get -g/-t`) do not exist here;
  // ignoring them would answer a narrower question with more rows than asked for.
  for (const name of ["userfilter", "userorder"]) {
    if (params.has(name))
      throw errors.badFilter(`Parameter '${name}' (named filters and sorts) is not supported`);
  }
  const { pagesize, offset } = pageWindow(params);
  const pagekey = decodePagekey(single(params, "pagekey"));
  const parentText = single(params, "parent");
  const parent = parentText === undefined ? undefined : parseParentKey(resource, parentText);
  const nometa = flag(params, "nometa");
  const kept = queryWithout(params, POSITION_PARAMETERS);
  const batchUrl = (
    resourceName: string,
    query: [string, string][],
    nextOffset: number,
    nextKey: unknown[] | undefined,
  ) => {
    query.push(["offset", String(nextOffset)]);
    if (nextKey) query.push(["pagekey", Buffer.from(JSON.stringify(nextKey)).toString("base64url")]);
    return `${collectionHref(scope.addressing, resourceName)}?${encodeQuery(query)}`;
  };
  return {
    project: scope.project,
    principal: scope.principal,
    resource,
    addressing: scope.addressing,
    key,
    client: {
      filters: params.get("filter") ?? [],
      sysfilters: params.get("sysfilter") ?? [],
      orders: params.get("order") ?? [],
      sysorders: params.get("sysorder") ?? [],
    },
    pagesize,
    offset,
    pagekey,
    parent,
    nometa,
    nextBatchUrl: (nextOffset, nextKey) => batchUrl(resource.name, [...kept], nextOffset, nextKey),
    childrenBatchUrl: (sub, parentSegment, nextOffset, nextKey) => {
      const query: [string, string][] = [
        ["parent", parentSegment],
        ["pagesize", String(pagesize)],
      ];
      if (nometa) query.push(["nometa", "true"]);
      return batchUrl(sub.name, query, nextOffset, nextKey);
    },
  };
}

/** The parameters as name/value pairs (repeated ones repeated), without those named in `without`. */
export function queryWithout(params: QueryParams, without: readonly string[]): [string, string][] {
  return [...params.entries()]
    .filter(([name]) => !without.includes(name))
    .flatMap(([name, values]) => values.map((v): [string, string] => [name, v]));
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
