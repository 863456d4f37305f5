/**
 * What an authentication provider (built-in or custom JavaScript) must answer.
 * The internal API (`/internal/v1/.../authenticate`) turns a provider verdict into
 * the answer the auth service needs to mint a key.
 */
export interface LoginField {
  name: string;
  display: string;
  type: string;
  description?: string;
  length?: number;
}

export interface LoginInfo {
  fields: LoginField[];
  links: { display: string; href: string }[];
}

export type ChangePasswordResult = "success" | "failure" | "notSupported";

/** A successful verdict. Expiry: `keyExpiration` wins over `keyLifetimeSeconds` when both are set. */
export interface ProviderSuccess {
  ok: true;
  userIdentifier: string;
  /** Role names the provider asked for; roles unknown to the project are already removed. */
  roles: string[];
  /** Become the key's globals, usable as `@{name}` in row filters. */
  globals: Record<string, unknown>;
  keyLifetimeSeconds?: number;
  /** Absolute expiry, epoch milliseconds. */
  keyExpiration?: number;
  userInfo?: Record<string, unknown>;
  /** Only present when the login asked for a password change. */
  changePasswordResult?: ChangePasswordResult;
  changePasswordMessage?: string;
}

/** A failed verdict. `message` is safe to show to the client (already summarised). */
export interface ProviderFailure {
  ok: false;
  message: string;
}

export type ProviderVerdict = ProviderSuccess | ProviderFailure;

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
