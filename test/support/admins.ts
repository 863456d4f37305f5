/** Account administrators in integration tests: create them (as the operator) and log them in. */
import { expect } from "chai";
import { type adminClient, call, type Reply } from "./http.ts";

/** POST /admin/v1/accounts/{account}/@authentication with any body (and query). */
export function adminAuthentication(
  baseUrl: string,
  account: string,
  body: unknown,
  query = "",
): Promise<Reply> {
  return call(baseUrl, "POST", `/admin/v1/accounts/${account}/@authentication${query}`, { body });
}

/** Logs an administrator in and answers the admin key (the login must succeed). */
export async function adminKey(
  baseUrl: string,
  account: string,
  login: string,
  password: string,
): Promise<string> {
  const r = await adminAuthentication(baseUrl, account, { username: login, password });
  expect(r.status, `login of ${login}@${account}: ${JSON.stringify(r.body)}`).to.equal(200);
  return r.body.apikey;
}

/** Creates (or replaces) an administrator through `admin` (the operator's client, or an admin's). */
export async function putAdmin(
  admin: ReturnType<typeof adminClient>,
  account: string,
  login: string,
  role: "admin" | "reader",
  password: string,
): Promise<void> {
  const r = await admin.send("PUT", `/accounts/${account}/admins/${login}`, { password, role });
  expect(r.status, `PUT admin ${login}@${account}: ${JSON.stringify(r.body)}`).to.be.oneOf([200, 201]);
}

/** The error body without its request id (for comparing two answers). */
export function withoutRequestId(body: Record<string, unknown>): Record<string, unknown> {
  const { requestId: _requestId, ...rest } = body;
  return rest;
}
