/**
 * What each caller of the admin API may do, decided from the method and the
 * path alone (both services apply the same rules):
 * - the operator: everything;
 * - an account's `admin`: everything under `/admin/v1/accounts/<its account>/`,
 *   and reading or renaming the account record itself; creating and deleting
 *   accounts stays with the operator;
 * - an account's `reader`: GET only, under the same paths;
 * - any other account's paths answer an administrator exactly as an account
 *   that does not exist would (404/4041), so they tell nothing about which
 *   accounts exist; paths outside every account are the operator's (403/4031),
 *   except the platform's own descriptions (the definition schema), which every
 *   administrator may read.
 */
import { errors } from "../errors.ts";
import type { AdminCaller } from "./caller.ts";

export interface AdminTarget {
  /** The account named by the path, decoded; undefined for paths outside every account. */
  account: string | undefined;
  /** The path is the account record itself (`/admin/v1/accounts/<account>`). */
  accountRecord: boolean;
  /** A path outside every account that every administrator may read (the definition schema). */
  readByEveryAdministrator: boolean;
}

/** Without regard to letter case, as the routers (and ingress-nginx) match paths. */
const ACCOUNT_PATH = /^\/admin\/v1\/accounts\/([^/]+)(\/.*)?$/i;
const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/** Descriptions of the platform itself, the same for every account. */
const PLATFORM_DESCRIPTIONS = /^\/admin\/v1\/definition-schema\/?$/i;

export function targetOf(path: string): AdminTarget {
  const match = ACCOUNT_PATH.exec(path);
  if (!match)
    return {
      account: undefined,
      accountRecord: false,
      readByEveryAdministrator: PLATFORM_DESCRIPTIONS.test(path),
    };
  let account = match[1] ?? "";
  try {
    account = decodeURIComponent(account);
  } catch {
    // Not a name any account has: it stays as sent.
  }
  return {
    account,
    accountRecord: match[2] === undefined || match[2] === "/",
    readByEveryAdministrator: false,
  };
}

/** Whether the caller may address the target's account at all (404 or 403 otherwise). */
export function checkScope(caller: AdminCaller, target: AdminTarget): void {
  if (caller.kind === "operator" || target.readByEveryAdministrator) return;
  if (target.account === undefined) throw errors.forbidden("Only the platform operator may use this route");
  if (target.account !== caller.account) throw errors.noAccount(target.account);
}

/** Whether the caller's role allows the method on the target (403 otherwise); after checkScope. */
export function checkRole(caller: AdminCaller, method: string, target: AdminTarget): void {
  if (caller.kind === "operator") return;
  if (target.readByEveryAdministrator && !READ_METHODS.has(method)) {
    throw errors.forbidden("Only the platform operator may use this route");
  }
  if (target.accountRecord && method === "DELETE") {
    throw errors.forbidden("Only the platform operator may delete an account");
  }
  if (caller.role === "reader" && !READ_METHODS.has(method)) {
    throw errors.forbidden("A reader of the account may only read (GET)");
  }
}
