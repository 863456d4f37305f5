/**
 * Client of the data service's internal API (contract: shared/contracts/internal-api.ts).
 * Authenticated with the service credential; propagates the request id. Every
 * answer is parsed with its contract's schema: one out of contract is the data
 * service failing (503), never a value taken on trust.
 */

import { z } from "zod";
import {
  type AccountInfo,
  type AdminInfo,
  type AdminLoginBody,
  type AdminLoginResponse,
  type AuditReportBody,
  type AuthenticateBody,
  type AuthenticateResponse,
  accountInfoSchema,
  adminInfoSchema,
  adminLoginResponseSchema,
  authenticateResponseSchema,
  type LoginInfoResponse,
  loginInfoResponseSchema,
  type ProjectSettings,
  projectSettingsSchema,
} from "../../../../shared/contracts/internal-api.ts";
import { ApiError, ErrorCode, errors } from "../../../../shared/errors.ts";

/** Headers of an answer the client passes on as they are. */
const LIMIT_HEADERS = ["Retry-After", "RateLimit", "RateLimit-Policy"];

/** What a passed-on answer's body may say; a part that is not of its type is left out. */
const limitAnswerSchema = z.object({
  errorCode: z.number().optional().catch(undefined),
  errorMessage: z.string().optional().catch(undefined),
});

/**
 * An answer of the data service that is the client's answer too: same status, code, message and
 * limit headers. A 429 (the account's request rate, or its share of the sandbox); a 503 that says
 * when to try again (`Retry-After`: an identity provider that could not be reached, say).
 */
async function passedOn(response: Response): Promise<ApiError> {
  const answer = limitAnswerSchema.safeParse(await response.json().catch(() => undefined));
  const body = answer.success ? answer.data : {};
  const headers: Record<string, string> = {};
  for (const name of LIMIT_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const tooMany = response.status === 429;
  return new ApiError(
    response.status,
    body.errorCode ?? (tooMany ? ErrorCode.rateLimited : ErrorCode.unavailable),
    body.errorMessage ?? (tooMany ? "Too many requests; try again later" : "Unavailable; try again later"),
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
  /** The data service's answer; null for a 404 (no such account, project or administrator). */
  const send = async (
    method: string,
    path: string,
    requestId: string,
    body?: unknown,
  ): Promise<Response | null> => {
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
    if (response.status === 429 || (response.status === 503 && response.headers.has("retry-after")))
      throw await passedOn(response);
    if (!response.ok) {
      await response.body?.cancel();
      throw errors.unavailable(`The data service (status ${response.status})`);
    }
    return response;
  };
  /** The answer's JSON as its contract's schema has it; null for a 404. */
  const call = async <T>(
    schema: z.ZodType<T>,
    method: string,
    path: string,
    requestId: string,
    body?: unknown,
  ): Promise<T | null> => {
    const response = await send(method, path, requestId, body);
    if (!response) return null;
    let json: unknown;
    try {
      json = await response.json();
    } catch (err) {
      throw errors.unavailable("The data service (an answer that is not JSON)", err);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw errors.unavailable("The data service (an answer out of contract)", parsed.error);
    return parsed.data;
  };
  const accountPath = (account: string) => `/accounts/${encodeURIComponent(account)}`;
  const path = (account: string, project: string) =>
    `${accountPath(account)}/projects/${encodeURIComponent(project)}`;
  return {
    settings: (a, p, id) => call(projectSettingsSchema, "GET", `${path(a, p)}/settings`, id),
    loginInfo: (a, p, id) => call(loginInfoResponseSchema, "GET", `${path(a, p)}/login-info`, id),
    authenticate: (a, p, body, id) =>
      call(authenticateResponseSchema, "POST", `${path(a, p)}/authenticate`, id, body),
    account: (a, id) => call(accountInfoSchema, "GET", accountPath(a), id),
    admin: (a, login, id) =>
      call(adminInfoSchema, "GET", `${accountPath(a)}/admins/${encodeURIComponent(login)}`, id),
    adminLogin: (a, body, id) =>
      call(adminLoginResponseSchema, "POST", `${accountPath(a)}/admin-login`, id, body),
    async reportAudit(a, report) {
      const response = await send("POST", `${accountPath(a)}/audit`, report.requestId, report);
      await response?.body?.cancel();
    },
  };
}
