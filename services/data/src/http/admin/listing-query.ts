/**
 * The query parameters the audit and revision listings share, checked (400/4001
 * naming what is wrong): `order` (`oldest`, the default, or `newest`) and `by`
 * (`operator`, or `admin:<login>`); and the audit's own `kind` and `refused`.
 */
import {
  AUDIT_KINDS,
  type AuditKind,
  LISTING_ORDERS,
  type ListingOrder,
} from "../../../../../shared/contracts/admin-api.ts";
import { errors } from "../../../../../shared/errors.ts";
import { isStoredName } from "../../../../../shared/names.ts";
import { type QueryParams, single } from "../../domain/read/query-params.ts";
import type { ActorFilter } from "../../store/actor-filter.ts";
import { booleanParam } from "./params.ts";

export function orderParam(value: string | undefined): ListingOrder {
  if (value === undefined || value === "") return "oldest";
  if ((LISTING_ORDERS as readonly string[]).includes(value)) return value as ListingOrder;
  throw errors.malformed(`Parameter 'order' must be ${LISTING_ORDERS.join(" or ")}`);
}

export function byParam(value: string | undefined): ActorFilter | undefined {
  if (value === undefined || value === "") return undefined;
  if (value === "operator") return { kind: "operator" };
  const login = value.startsWith("admin:") ? value.slice("admin:".length) : undefined;
  if (login !== undefined && isStoredName("admin", login)) return { kind: "admin", login };
  throw errors.malformed("Parameter 'by' must be 'operator' or 'admin:<login>'");
}

/** The part of an audit entry's path after `/admin/v1/accounts/<account>` that each kind of change has. */
const KIND_PATHS: Record<AuditKind, string> = {
  account: "/?$",
  admin: "/(admins(/[^/]*)?|@authentication)/?$",
  project: "/projects/[^/]+(/rollback)?/?$",
  user: "/projects/[^/]+/users(/[^/]*)?/?$",
  apikey: "/projects/[^/]+/apikeys(/[^/]*)?/?$",
};

/** The path pattern of a `kind` of change (absent: every path). */
export function kindParam(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!(AUDIT_KINDS as readonly string[]).includes(value)) {
    throw errors.malformed(`Parameter 'kind' must be one of ${AUDIT_KINDS.join(", ")}`);
  }
  return `^/admin/v1/accounts/[^/]+${KIND_PATHS[value as AuditKind]}`;
}

/** `refused=true`: only refused changes; `false`: only accepted ones; absent: both. */
export function refusedParam(value: string | undefined): boolean | undefined {
  return value === undefined ? undefined : booleanParam(value, "refused");
}

/**
 * The query of the page after the one that ended at `last`: the filters as they were asked
 * for, then where it goes on — after `last` oldest first; newest first below `last`, from
 * the same `since` (the lower bound) if there was one.
 */
export function nextPageQuery(
  params: QueryParams,
  filters: readonly string[],
  newestFirst: boolean,
  since: string | undefined,
  last: string,
): [string, string][] {
  const kept: [string, string][] = [];
  for (const name of filters) {
    const value = single(params, name);
    if (value !== undefined) kept.push([name, value]);
  }
  if (!newestFirst) return [...kept, ["since", last]];
  return [
    ...kept,
    ...(since === undefined ? [] : ([["since", since]] as [string, string][])),
    ["before", last],
  ];
}
