/**
 * The contract of the data service's internal API, used by the auth service.
 * Both sides import these shapes; the contract tests check them over the wire.
 */
import { z } from "zod";
import { errors } from "../errors.ts";
import { ADMIN_ROLES, type AdminRole } from "../keys/key-record.ts";

/** The verdict message of a failed login whose reason must not be shown (the auth service answers its generic 4015). */
export const GENERIC_LOGIN_FAILURE = errors.loginFailed().message;

export const authenticateBodySchema = z.strictObject({
  /** API version named in the login URL; 404 when the project has no such version. */
  version: z.string().max(63).optional(),
  payload: z.record(z.string(), z.unknown()),
  enablePasswordChange: z.boolean().default(false),
});
export type AuthenticateBody = z.infer<typeof authenticateBodySchema>;

export interface ProjectSettings {
  account: string;
  name: string;
  uid: string;
  revision: number;
  versions: string[];
  roles: string[];
  provider: "builtin" | "custom" | "oidc";
  /** Project key lifetime (default 3600 s). */
  keyLifetimeSeconds: number;
  /**
   * The login body's fields that name the account being logged into (the lock-out
   * counts failures per their values): declared by the project, `["username"]` for
   * the built-in provider; absent when a custom provider's project declares none.
   */
  identityFields?: string[];
}

/** A provider's successful verdict. Expiry: `keyExpiration` wins over `keyLifetimeSeconds` when both are set. */
export interface VerdictSuccess {
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
  changePasswordResult?: "success" | "failure" | "notSupported";
  changePasswordMessage?: string;
}

/** A failed verdict. `message` is safe to show to the client (already summarised, or GENERIC_LOGIN_FAILURE). */
export interface VerdictFailure {
  ok: false;
  message: string;
}

/**
 * The answer of `POST …/authenticate`. A 429 instead (the account's JavaScript used its share of
 * the sandbox) is the login's answer too: the auth service passes it on with its headers.
 */
export interface AuthenticateResponse {
  project: ProjectSettings;
  verdict: VerdictSuccess | VerdictFailure;
}

export interface LoginInfoResponse {
  fields: { name: string; display: string; type: string; description?: string; length?: number }[];
  links: { display: string; href: string }[];
}

/** An account: its name and incarnation (new each time the account is created). */
export interface AccountInfo {
  name: string;
  uid: string;
}

/** An account administrator as stored now (never the password hash). */
export interface AdminInfo {
  login: string;
  role: AdminRole;
  /** Incarnation of the account. */
  accountUid: string;
  /** Changes whenever the administrator's password is set: keys minted before are refused. */
  credentialStamp: string;
}

/** An account administrator's login (`POST /admin/v1/accounts/{a}/@authentication`). */
export const adminLoginBodySchema = z.strictObject({
  payload: z.record(z.string(), z.unknown()),
  enablePasswordChange: z.boolean().default(false),
});
export type AdminLoginBody = z.infer<typeof adminLoginBodySchema>;

export interface AdminVerdictSuccess extends AdminInfo {
  ok: true;
  /** Only present when the login asked for a password change. */
  changePasswordResult?: "success" | "failure";
  changePasswordMessage?: string;
}

/**
 * The verdict on an administrator's login. An account that does not exist fails
 * like a wrong password (after as long a check), so a login tells nothing about
 * which accounts exist.
 */
export interface AdminLoginResponse {
  verdict: AdminVerdictSuccess | VerdictFailure;
}

/** A change the auth service made (keys), for the account's audit trail. */
export const auditReportBodySchema = z.strictObject({
  actor: z.discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("operator") }),
    z.strictObject({
      kind: z.literal("admin"),
      login: z.string().min(1).max(128),
      role: z.enum(ADMIN_ROLES),
    }),
  ]),
  method: z.string().min(1).max(16),
  path: z.string().min(1).max(2000),
  summary: z.string().max(1000),
  status: z.number().int().min(100).max(599),
  errorCode: z.number().int().optional(),
  requestId: z.string().min(1).max(64),
  clientRequestId: z.string().min(1).max(64).optional(),
});
export type AuditReportBody = z.infer<typeof auditReportBodySchema>;
