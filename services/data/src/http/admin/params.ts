/** Path and query parameters of the admin API, checked: 400/4001 naming what is wrong. */
import type { Context } from "koa";
import { errors } from "../../../../../shared/errors.ts";
import { isStoredName, type NameKind, nameProblem } from "../../../../../shared/names.ts";

/** Methods that only read or remove: they may address a name stored before the grammar (docs/names.md). */
const READ_OR_DELETE = new Set(["GET", "HEAD", "OPTIONS", "DELETE"]);

/**
 * A name of `kind` from the path. A write needs a name of the grammar; a read or a
 * delete may also address one stored before it, which stays read-only.
 */
export function pathName(ctx: Context, param: string, kind: NameKind): string {
  const value = ctx.params[param] ?? "";
  const problem = nameProblem(kind, value);
  if (problem === undefined || (READ_OR_DELETE.has(ctx.method) && isStoredName(kind, value))) return value;
  throw errors.malformed(`'${value}' is not a valid ${kind} name: it ${problem} (docs/names.md)`);
}

/** An account, project or version name from the path. */
export function nameParam(ctx: Context, param: "account" | "project" | "version"): string {
  return pathName(ctx, param, param);
}

/** An account name given as a query parameter (absent: undefined). */
export function optionalNameQuery(value: string | undefined): string | undefined {
  if (value === undefined || isStoredName("account", value)) return value;
  throw errors.malformed(`'${value}' is not a valid account name (docs/names.md)`);
}

/** A built-in user's or an administrator's name from the path. */
export function loginParam(ctx: Context, param: "username" | "login"): string {
  return pathName(ctx, param, param === "username" ? "user" : "admin");
}

/** A revision number from the path: 404 when it cannot be one. */
export function revisionParam(ctx: Context): number {
  const value = ctx.params.revision ?? "";
  if (!/^[1-9]\d{0,8}$/.test(value)) throw errors.notFound(`No revision '${value}'`);
  return Number(value);
}

/** `true` or `false` (absent: false). */
export function booleanParam(value: string | undefined, name: string): boolean {
  if (value === undefined || value === "false") return false;
  if (value === "true" || value === "") return true;
  throw errors.malformed(`Parameter '${name}' must be true or false`);
}
