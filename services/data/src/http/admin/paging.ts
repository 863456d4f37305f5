/**
 * Pages of admin listings (audit entries, revisions), shaped like the data API's
 * lists: an array that, when more entries exist, ends with one extra element
 * `{"@metadata": {"next_batch": "<URL of the next page>"}}`.
 */
import type { Context } from "koa";
import { originOf } from "../../../../../shared/http/forwarding.ts";
import { encodeQuery, intParam, type QueryParams } from "../../domain/read/query-params.ts";

export const ADMIN_PAGESIZE_DEFAULT = 20;
export const ADMIN_PAGESIZE_MAX = 1000;

export function pageSize(params: QueryParams): number {
  return intParam(params, "pagesize", ADMIN_PAGESIZE_DEFAULT, 1, ADMIN_PAGESIZE_MAX);
}

export interface NextBatch {
  "@metadata": { next_batch: string };
}

/**
 * `fetched` holds up to one entry more than `limit` (read to know whether more
 * exist); `nextQuery` gives the parameters of the page after a given entry.
 */
export function page<T, V>(
  ctx: Context,
  publicBaseUrl: string | undefined,
  fetched: T[],
  limit: number,
  view: (entry: T) => V,
  nextQuery: (last: T) => [string, string][],
): (V | NextBatch)[] {
  const shown = fetched.slice(0, limit);
  const body: (V | NextBatch)[] = shown.map(view);
  const last = shown.at(-1);
  if (fetched.length > limit && last !== undefined) {
    const base = (publicBaseUrl ?? originOf(ctx)).replace(/\/+$/, "");
    const query = encodeQuery([...nextQuery(last), ["pagesize", String(limit)]]);
    body.push({ "@metadata": { next_batch: `${base}${ctx.path}?${query}` } });
  }
  return body;
}
