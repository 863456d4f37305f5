/**
 * What an authentication provider (built-in or custom JavaScript) must answer.
 * The internal API (`/internal/v1/.../authenticate`) turns a provider verdict into
 * the answer the auth service needs to mint a key.
 */
import type { LoginInfoResponse } from "../../../../shared/contracts/internal-api.ts";

/** What `getLoginInfo` answers (the internal API serves it as it is). */
export type LoginInfo = LoginInfoResponse;
export type LoginField = LoginInfoResponse["fields"][number];

/** Verdict shapes are the internal API's contract (the auth service reads them as they are). */
export type {
  VerdictFailure as ProviderFailure,
  VerdictSuccess as ProviderSuccess,
} from "../../../../shared/contracts/internal-api.ts";

import type { VerdictFailure, VerdictSuccess } from "../../../../shared/contracts/internal-api.ts";

export type ChangePasswordResult = NonNullable<VerdictSuccess["changePasswordResult"]>;
export type ProviderVerdict = VerdictSuccess | VerdictFailure;

export interface AuthenticateRequest {
  /** The login body as the client sent it (credentials; shape depends on the provider). */
  payload: Record<string, unknown>;
  /** True when the login carried `?enablePasswordChange!`. */
  enablePasswordChange: boolean;
}

export interface AuthProvider {
  authenticate(request: AuthenticateRequest): Promise<ProviderVerdict>;
  getLoginInfo(): Promise<LoginInfo>;
}
