/** What every admin screen works with: the session, its API and whether it may change anything. */
import { type AdminApi, adminApi } from "./admin-api.ts";
import type { Client } from "./api.ts";
import type { AdminSession } from "./session.ts";

export interface AdminContext {
  session: AdminSession;
  client: Client;
  /** The admin API, typed, through the session's client. */
  api: AdminApi;
  /** Data-API calls with the administrator's own key (the data explorer): full access to the account's projects. */
  dataClient: Client;
  /** Administrators with role `reader` see everything and change nothing. */
  readOnly: boolean;
  /** `/admin/v1/accounts/<account>` */
  accountPath: string;
  /** Goes on with a new key of the same administrator (after their own password change). */
  renew: (session: AdminSession) => void;
}

export function adminContext(
  session: AdminSession,
  client: Client,
  dataClient: Client,
  renew: (session: AdminSession) => void,
): AdminContext {
  const api = adminApi(client, session.account);
  return {
    session,
    client,
    api,
    dataClient,
    readOnly: session.role !== "admin",
    accountPath: api.accountPath,
    renew,
  };
}
