/**
 * The contract of the data service's internal API, used by the auth service:
 * zod schemas of every request and answer, and their types. The data service
 * builds its answers as these types and parses the requests with the schemas;
 * the auth service's client parses every answer with them (an answer out of
 * contract is a failure of the data service, never a value taken on trust);
 * the contract tests check them over the wire.
 */
import { z } from "zod";
import { errors } from "../errors.ts";
import { ADMIN_ROLES } from "../keys/key-record.ts";

/** The verdict message of a failed login whose reason must not be shown (the auth service answers its generic 4015). */
export const GENERIC_LOGIN_FAILURE = errors.loginFailed().message;

export const authenticateBodySchema = z.strictObject({
  /** API version named in the login URL; 404 when the project has no such version. */
  version: z.string().max(63).optional(),
  payload: z.record(z.string(), z.unknown()),
  enablePasswordChange: z.boolean().default(false),
});
export type AuthenticateBody = z.infer<typeof authenticateBodySchema>;

export const projectSettingsSchema = z.object({
  account: z.string(),
  name: z.string(),
  uid: z.string(),
  revision: z.number().int(),
  versions: z.array(z.string()),
  roles: z.array(z.string()),
  provider: z.enum(["builtin", "custom", "oidc"]),
  /** Project key lifetime (default 3600 s). */
  keyLifetimeSeconds: z.number(),
  /**
   * The login body's fields that name the account being logged into (the lock-out
   * counts failures per their values): declared by the project, `["username"]` for
   * the built-in provider; absent when a custom provider's project declares none.
   */
  identityFields: z.array(z.string()).optional(),
});
export type ProjectSettings = z.infer<typeof projectSettingsSchema>;

/** A provider's successful verdict. Expiry: `keyExpiration` wins over `keyLifetimeSeconds` when both are set. */
export const verdictSuccessSchema = z.object({
  ok: z.literal(true),
  userIdentifier: z.string(),
  /** Role names the provider asked for; roles unknown to the project are already removed. */
  roles: z.array(z.string()),
  /** Become the key's globals, usable as `@{name}` in row filters. */
  globals: z.record(z.string(), z.unknown()),
  keyLifetimeSeconds: z.number().optional(),
  /** Absolute expiry, epoch milliseconds. */
  keyExpiration: z.number().optional(),
  userInfo: z.record(z.string(), z.unknown()).optional(),
  /** Only present when the login asked for a password change. */
  changePasswordResult: z.enum(["success", "failure", "notSupported"]).optional(),
  changePasswordMessage: z.string().optional(),
});
export type VerdictSuccess = z.infer<typeof verdictSuccessSchema>;

/** A failed verdict. `message` is safe to show to the client (already summarised, or GENERIC_LOGIN_FAILURE). */
export const verdictFailureSchema = z.object({
  ok: z.literal(false),
  message: z.string(),
});
export type VerdictFailure = z.infer<typeof verdictFailureSchema>;

/**
 * The answer of `POST …/authenticate`. A 429 instead (the account's JavaScript used its share of
 * the sandbox) is the login's answer too: the auth service passes it on with its headers.
 */
export const authenticateResponseSchema = z.object({
  project: projectSettingsSchema,
  verdict: z.discriminatedUnion("ok", [verdictSuccessSchema, verdictFailureSchema]),
});
export type AuthenticateResponse = z.infer<typeof authenticateResponseSchema>;

export const loginInfoResponseSchema = z.object({
  fields: z.array(
    z.object({
      name: z.string(),
      display: z.string(),
      type: z.string(),
      description: z.string().optional(),
      length: z.number().optional(),
    }),
  ),
  links: z.array(z.object({ display: z.string(), href: z.string() })),
});
export type LoginInfoResponse = z.infer<typeof loginInfoResponseSchema>;

/** An account: its name and incarnation (new each time the account is created). */
export const accountInfoSchema = z.object({
  name: z.string(),
  uid: z.string(),
});
export type AccountInfo = z.infer<typeof accountInfoSchema>;

/** An account administrator as stored now (never the password hash). */
export const adminInfoSchema = z.object({
  login: z.string(),
  role: z.enum(ADMIN_ROLES),
  /** Incarnation of the account. */
  accountUid: z.string(),
  /** Changes whenever the administrator's password is set: keys minted before are refused. */
  credentialStamp: z.string(),
});
export type AdminInfo = z.infer<typeof adminInfoSchema>;

/** An account administrator's login (`POST /admin/v1/accounts/{a}/@authentication`). */
export const adminLoginBodySchema = z.strictObject({
  payload: z.record(z.string(), z.unknown()),
  enablePasswordChange: z.boolean().default(false),
});
export type AdminLoginBody = z.infer<typeof adminLoginBodySchema>;

export const adminVerdictSuccessSchema = adminInfoSchema.extend({
  ok: z.literal(true),
  /** Only present when the login asked for a password change. */
  changePasswordResult: z.enum(["success", "failure"]).optional(),
  changePasswordMessage: z.string().optional(),
});
export type AdminVerdictSuccess = z.infer<typeof adminVerdictSuccessSchema>;

/**
 * The verdict on an administrator's login. An account that does not exist fails
 * like a wrong password (after as long a check), so a login tells nothing about
 * which accounts exist.
 */
export const adminLoginResponseSchema = z.object({
  verdict: z.discriminatedUnion("ok", [adminVerdictSuccessSchema, verdictFailureSchema]),
});
export type AdminLoginResponse = z.infer<typeof adminLoginResponseSchema>;

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
