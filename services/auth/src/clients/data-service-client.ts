/**
 * Client of the data service's internal API (contract: shared/contracts/internal-api.ts).
 * Authenticated with the service credential; propagates the request id.
 */

import type {
  AccountInfo,
  AdminInfo,
  AdminLoginBody,
  AdminLoginResponse,
  AuditReportBody,
  AuthenticateBody,
  AuthenticateResponse,
  LoginInfoResponse,
  ProjectSettings,
} from "../../../../shared/contracts/internal-api.ts";
import { ApiError, ErrorCode, errors } from "../../../../shared/errors.ts";

/** Headers of a 429 the client passes on as they are. */
const LIMIT_HEADERS = ["Retry-After", "RateLimit", "RateLimit-Policy"];

/**
 * A 429 of the data service (the account's request rate, or its share of the sandbox) is the
 * client's answer too: same status, code, message and limit headers.
 */
async function tooManyRequests(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => ({}))) as { errorCode?: unknown; errorMessage?: unknown };
  const headers: Record<string, string> = {};
  for (const name of LIMIT_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return new ApiError(
    429,
    typeof body.errorCode === "number" ? body.errorCode : ErrorCode.rateLimited,
    typeof body.errorMessage === "string" ? body.errorMessage : "Too many requests; try again later",
    { headers },
  );
}

export interface DataServiceClient {
  settings(account: string, project: string, requestId: string): Promise<ProjectSettings | null>;
  loginInfo(account: string, project: string, requestId: string): Promise<LoginInfoResponse | null>;
  authenticate(
    account: string,
    project: string,
    body: AuthenticateBody,
    requestId: string,
  ): Promise<AuthenticateResponse | null>;
  /** The account's incarnation; null when there is no such account. */
  account(account: string, requestId: string): Promise<AccountInfo | null>;
  /** An administrator as stored now; null when the account or the administrator does not exist. */
  admin(account: string, login: string, requestId: string): Promise<AdminInfo | null>;
  /** The verdict on an administrator's login (a missing account fails like a wrong password). */
  adminLogin(account: string, body: AdminLoginBody, requestId: string): Promise<AdminLoginResponse | null>;
  /** Records a change the auth service made in the account's audit trail. */
  reportAudit(account: string, report: AuditReportBody): Promise<void>;
}

export function createDataServiceClient(
  baseUrl: string,
  serviceToken: string,
  timeoutMs = 10_000,
): DataServiceClient {
  const root = `${baseUrl.replace(/\/+$/, "")}/internal/v1`;
  const call = async <T>(
    method: string,
    path: string,
    requestId: string,
    body?: unknown,
  ): Promise<T | null> => {
    let response: Response;
    try {
      response = await fetch(`${root}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${serviceToken}`,
          "x-request-id": requestId,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw errors.unavailable("The data service", err);
    }
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    if (response.status === 429) throw await tooManyRequests(response);
    if (!response.ok) {
      await response.body?.cancel();
      throw errors.unavailable(`The data service (status ${response.status})`);
    }
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  };
  const accountPath = (account: string) => `/accounts/${encodeURIComponent(account)}`;
  const path = (account: string, project: string) =>
    `${accountPath(account)}/projects/${encodeURIComponent(project)}`;
  return {
    settings: (a, p, id) => call<ProjectSettings>("GET", `${path(a, p)}/settings`, id),
    loginInfo: (a, p, id) => call<LoginInfoResponse>("GET", `${path(a, p)}/login-info`, id),
    authenticate: (a, p, body, id) =>
      call<AuthenticateResponse>("POST", `${path(a, p)}/authenticate`, id, body),
    account: (a, id) => call<AccountInfo>("GET", accountPath(a), id),
    admin: (a, login, id) =>
      call<AdminInfo>("GET", `${accountPath(a)}/admins/${encodeURIComponent(login)}`, id),
    adminLogin: (a, body, id) => call<AdminLoginResponse>("POST", `${accountPath(a)}/admin-login`, id, body),
    async reportAudit(a, report) {
      await call<void>("POST", `${accountPath(a)}/audit`, report.requestId, report);
    },
  };
}
