/** Path and query parameters of the admin API, checked: 400/4001 naming what is wrong. */
import type { Context } from "koa";
import { errors } from "../../../../../shared/errors.ts";
import { isValidName } from "../../../../../shared/names.ts";

/** Built-in users' and account administrators' names. */
const LOGIN = /^[A-Za-z0-9_.@+-]{1,128}$/;

function checkedName(value: string): string {
  if (!isValidName(value))
    throw errors.malformed(`'${value}' is not a valid name: [A-Za-z][A-Za-z0-9_-]{0,62}`);
  return value;
}

/** An account, project or version name from the path. */
export function nameParam(ctx: Context, param: string): string {
  return checkedName(ctx.params[param] ?? "");
}

/** An account name given as a query parameter (absent: undefined). */
export function optionalNameQuery(value: string | undefined): string | undefined {
  return value === undefined ? undefined : checkedName(value);
}

/** A built-in user's or an administrator's name from the path. */
export function loginParam(ctx: Context, param: string): string {
  const value = ctx.params[param] ?? "";
  if (!LOGIN.test(value))
    throw errors.malformed("A user or admin name is 1 to 128 characters of A-Z a-z 0-9 _ . @ + -");
  return value;
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
