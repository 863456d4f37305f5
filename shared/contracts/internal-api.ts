/**
 * The contract of the data service's internal API, used by the auth service.
 * Both sides import these shapes; the contract tests check them over the wire.
 */
import { z } from "zod";
import { errors } from "../errors.ts";

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
  provider: "builtin" | "custom";
  /** Project key lifetime (default 3600 s). */
  keyLifetimeSeconds: number;
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

export interface AuthenticateResponse {
  project: ProjectSettings;
  verdict: VerdictSuccess | VerdictFailure;
}

export interface LoginInfoResponse {
  fields: { name: string; display: string; type: string; description?: string; length?: number }[];
  links: { display: string; href: string }[];
}
