/**
 * Reading the audit trail: an account's (its current incarnation: an account
 * created again does not see its predecessor's), readable by its admins and
 * readers; and the whole platform's (every incarnation of every account, and the
 * platform-wide changes), for the operator only.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { AuditEntryView } from "../../../../../shared/contracts/admin-api.ts";
import { errors } from "../../../../../shared/errors.ts";
import { parseQueryString, single } from "../../domain/read/query-params.ts";
import { type AuditCursor, type AuditDoc, type AuditFilter, isAuditId } from "../../store/audit-store.ts";
import { type AdminRouteDeps, isoTime, requireAccount } from "./deps.ts";
import { byParam, kindParam, nextPageQuery, orderParam, refusedParam } from "./listing-query.ts";
import { page, pageSize } from "./paging.ts";
import { nameParam, optionalNameQuery } from "./params.ts";

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * `since`: an entry's id (the entries after it) or an ISO 8601 time (the entries
 * from the first one stored then or later). Ids are the trail's sequence
 * (store/audit-store.ts), so the entries after an id a reader has seen are all
 * the entries it has not seen.
 */
export function auditCursor(since: string | undefined): AuditCursor {
  if (since === undefined || since === "") return { after: "" };
  if (isAuditId(since)) return { after: since };
  const withZone = /T.*(Z|[+-]\d{2}:?\d{2})$/.test(since) || !since.includes("T") ? since : `${since}Z`;
  const at = Date.parse(withZone);
  if (!ISO_TIME.test(since) || Number.isNaN(at)) {
    throw errors.malformed("Parameter 'since' must be an audit entry's id or an ISO 8601 time");
  }
  return { from: new Date(Math.max(0, at)) };
}

const entryView = (e: AuditDoc): AuditEntryView => ({
  id: e._id,
  at: isoTime(e.at),
  account: e.account,
  incarnation: e.accountUid,
  actor: e.actor,
  method: e.method,
  path: e.path,
  summary: e.summary,
  status: e.status,
  ...(e.errorCode === undefined || e.errorCode === null ? {} : { errorCode: e.errorCode }),
  requestId: e.requestId,
  ...(e.clientRequestId ? { clientRequestId: e.clientRequestId } : {}),
});

/** An entry as the audit listings answer it. */
export type { AuditEntryView };

/** The filters a listing was asked for, as they go on in its `next_batch`. */
const FILTER_PARAMS = ["order", "by", "kind", "refused"] as const;

export function addAuditRoutes(router: Router, deps: AdminRouteDeps): void {
  const answer = async (
    ctx: Context,
    owner: Pick<AuditFilter, "account" | "accountUid">,
    extra: [string, string][],
  ) => {
    const params = parseQueryString(ctx.querystring);
    const since = single(params, "since");
    const before = single(params, "before");
    if (before !== undefined && !isAuditId(before)) {
      throw errors.malformed("Parameter 'before' must be an audit entry's id");
    }
    const newestFirst = orderParam(single(params, "order")) === "newest";
    const filter: AuditFilter = {
      ...owner,
      by: byParam(single(params, "by")),
      pathPattern: kindParam(single(params, "kind")),
      refused: refusedParam(single(params, "refused")),
    };
    const limit = pageSize(params);
    const fetched = await deps.audit.page(
      filter,
      { cursor: auditCursor(since), before, newestFirst },
      limit + 1,
    );
    ctx.body = page(ctx, deps.publicBaseUrl, fetched, limit, entryView, (last) => [
      ...extra,
      ...nextPageQuery(params, FILTER_PARAMS, newestFirst, since, last._id),
    ]);
  };

  router.get("/accounts/:account/audit", async (ctx) => {
    const doc = await requireAccount(deps, nameParam(ctx, "account"), ctx);
    await answer(ctx, { accountUid: deps.meta.accountUid(doc) }, []);
  });

  router.get("/audit", async (ctx) => {
    const account = optionalNameQuery(single(parseQueryString(ctx.querystring), "account"));
    await answer(
      ctx,
      account === undefined ? {} : { account },
      account === undefined ? [] : [["account", account]],
    );
  });
}
