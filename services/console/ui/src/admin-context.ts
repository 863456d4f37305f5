/** What every admin screen works with: the session, its client and whether it may change anything. */
import { type Client, seg } from "./api.ts";
import type { AdminSession } from "./session.ts";

export interface AdminContext {
  session: AdminSession;
  client: Client;
  /** Administrators with role `reader` see everything and change nothing. */
  readOnly: boolean;
  /** `/admin/v1/accounts/<account>` */
  accountPath: string;
}

export function adminContext(session: AdminSession, client: Client): AdminContext {
  return {
    session,
    client,
    readOnly: session.role !== "admin",
    accountPath: `/admin/v1/accounts/${seg(session.account)}`,
  };
}
