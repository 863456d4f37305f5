/** What every admin screen works with: the session, its client and whether it may change anything. */
import { type Client, seg } from "./api.ts";
import type { AdminSession } from "./session.ts";

export interface AdminContext {
  session: AdminSession;
  client: Client;
  /** Data-API calls with the administrator's own key (the data explorer): full access to the account's projects. */
  dataClient: Client;
  /** Administrators with role `reader` see everything and change nothing. */
  readOnly: boolean;
  /** `/admin/v1/accounts/<account>` */
  accountPath: string;
}

export function adminContext(session: AdminSession, client: Client, dataClient: Client): AdminContext {
  return {
    session,
    client,
    dataClient,
    readOnly: session.role !== "admin",
    accountPath: `/admin/v1/accounts/${seg(session.account)}`,
  };
}
