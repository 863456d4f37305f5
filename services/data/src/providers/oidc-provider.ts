/**
 * The built-in `oidc` provider: a login sends a token of the project's
 * OpenID Connect issuer (`{"id_token": "…"}` or `{"access_token": "…"}`, a
 * JWT in its compact form, each part canonical base64url: no padding, no
 * white space), verified with jose against the issuer's published keys
 * (oidc-keys.ts): the signature with one of the allowed asymmetric algorithms
 * (never `none`, never HMAC), `iss`, `aud`, `exp` and `nbf` within the clock
 * skew, and here `iat` not later than now plus the skew and `exp`, `nbf`, `iat`
 * finite numbers. Claims become the key's user identifier, roles and globals;
 * the key lives no longer than the token.
 *
 * Every refusal is the generic failed login (the reason is logged, never the
 * token); an issuer whose keys cannot be fetched is 503 naming the issuer, with
 * `Retry-After`.
 */
import { type JWTPayload, errors as joseErrors, jwtVerify } from "jose";
import { REFUSED } from "../../../../shared/contracts/internal-api.ts";
import { ApiError, ErrorCode } from "../../../../shared/errors.ts";
import type { OidcDefinition } from "../domain/definition/project-definition.ts";
import { isPlainObject } from "../domain/model/column-values.ts";
import type { SandboxLogger } from "../sandbox/index.ts";
import { IssuerUnavailableError, type OidcKeys } from "./oidc-keys.ts";
import type { AuthProvider, LoginInfo, ProviderVerdict } from "./provider.ts";

const TOKEN_FIELDS = ["id_token", "access_token"] as const;
const MAX_TOKEN_LENGTH = 16 * 1024;
const MAX_GLOBALS_BYTES = 64 * 1024;
const MAX_USER_IDENTIFIER = 1024;
/** When a login may be tried again after its issuer could not be reached (seconds). */
export const ISSUER_RETRY_AFTER_SECONDS = 5;
/** A compact JWS: three parts of the base64url alphabet (an empty signature is left to jose to refuse). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export const OIDC_LOGIN_INFO: LoginInfo = {
  // Tokens are secrets: typed `password`, so the lock-out never counts them as a user name.
  fields: [{ name: "id_token", display: "ID token (or access_token)", type: "password" }],
  links: [],
};

export interface OidcProviderOptions {
  settings: OidcDefinition;
  keys: OidcKeys;
  /** Role names the project defines; others are dropped. */
  projectRoles: ReadonlySet<string>;
  /** The project's key lifetime: the key lives this long at most, and never past the token's `exp`. */
  keyLifetimeSeconds: number;
  programKey: string;
  logger: SandboxLogger;
  now?: () => number;
}

/** The value at a dotted claim path (`realm_access.roles`), or undefined. */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  let value: unknown = claims;
  for (const name of path.split(".")) {
    if (!isPlainObject(value) || !Object.hasOwn(value, name)) return undefined;
    value = value[name];
  }
  return value;
}

/** The project roles a token's roles claim grants, through the role map when there is one. */
export function rolesOf(
  claims: Record<string, unknown>,
  settings: OidcDefinition,
  projectRoles: ReadonlySet<string>,
) {
  if (!settings.rolesClaim) return [];
  const value = claimAt(claims, settings.rolesClaim);
  const named = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string");
  const roleMap = settings.roleMap;
  const granted = roleMap
    ? named.flatMap((v) => (Object.hasOwn(roleMap, v) ? (roleMap[v] ?? []) : []))
    : named;
  return [...new Set(granted)].filter((r) => projectRoles.has(r));
}

/** The token a login body carries: exactly one of id_token and access_token, a text of sane length. */
function tokenOf(payload: Record<string, unknown>): string | undefined {
  const given = TOKEN_FIELDS.filter((f) => payload[f] !== undefined && payload[f] !== null);
  const [field] = given;
  if (field === undefined || given.length !== 1) return undefined;
  const token = payload[field];
  return typeof token === "string" && token.length <= MAX_TOKEN_LENGTH ? token : undefined;
}

/**
 * A compact JWS whose parts are canonical base64url: only its alphabet (no `=` padding, no white
 * space) and no stray bits in a part's last character (each part decodes and encodes back to itself).
 */
export function isCanonicalCompact(token: string): boolean {
  return (
    COMPACT_JWS.test(token) &&
    token.split(".").every((part) => Buffer.from(part, "base64url").toString("base64url") === part)
  );
}

export function createOidcProvider(options: OidcProviderOptions): AuthProvider {
  const { settings, keys, programKey, logger } = options;
  const now = options.now ?? Date.now;
  const verifyOptions = {
    issuer: settings.issuer,
    audience: settings.audience,
    algorithms: [...settings.algorithms],
    clockTolerance: settings.clockSkewSeconds,
    requiredClaims: ["exp"],
  };

  /** What is wrong with the token's claims beyond what jose checks, or undefined. */
  function claimsProblem(claims: JWTPayload): string | undefined {
    for (const name of ["exp", "nbf", "iat"] as const) {
      const value = claims[name];
      if (value !== undefined && !Number.isFinite(value))
        return `the token's '${name}' claim is not a finite number`;
    }
    if (claims.iat !== undefined && claims.iat > now() / 1000 + settings.clockSkewSeconds)
      return "the token's 'iat' claim is in the future, beyond the clock skew";
    return undefined;
  }

  /** The 503 of a login whose issuer's keys cannot be had: it names the issuer and when to try again. */
  function issuerUnavailable(e: IssuerUnavailableError): ApiError {
    logger.warn({ programKey, reason: e.message }, "oidc provider: the issuer's keys are unavailable");
    return new ApiError(
      503,
      ErrorCode.unavailable,
      `The identity provider (${settings.issuer}) could not be reached; try again later`,
      { headers: { "Retry-After": String(ISSUER_RETRY_AFTER_SECONDS) } },
    );
  }

  function refused(reason: string): ProviderVerdict {
    logger.warn({ programKey, reason }, "oidc provider refused a login");
    return REFUSED;
  }

  return {
    getLoginInfo: async () => structuredClone(OIDC_LOGIN_INFO),

    async authenticate({ payload }) {
      const token = tokenOf(isPlainObject(payload) ? payload : {});
      if (token === undefined) return refused("the login carries no single id_token or access_token text");
      if (!isCanonicalCompact(token)) return refused("the token is not three parts of canonical base64url");
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(token, keys.getKey, {
          ...verifyOptions,
          currentDate: new Date(now()),
        }));
      } catch (e) {
        if (e instanceof IssuerUnavailableError) throw issuerUnavailable(e);
        if (e instanceof joseErrors.JOSEError) return refused(`${e.code}: ${e.message}`);
        throw e;
      }
      const problem = claimsProblem(claims);
      if (problem) return refused(problem);
      const subject = claimAt(claims, settings.userIdentifierClaim);
      const userIdentifier = typeof subject === "number" ? String(subject) : subject;
      if (
        typeof userIdentifier !== "string" ||
        userIdentifier === "" ||
        userIdentifier.length > MAX_USER_IDENTIFIER
      )
        return refused(`the token's '${settings.userIdentifierClaim}' claim is not a user identifier`);
      const globals: Record<string, unknown> = {};
      for (const [name, path] of Object.entries(settings.globals ?? {})) {
        const value = claimAt(claims, path);
        if (value !== undefined) globals[name] = value;
      }
      if (Buffer.byteLength(JSON.stringify(globals)) > MAX_GLOBALS_BYTES)
        return refused("the globals taken from the token are larger than 64 KiB");
      // requiredClaims made sure of `exp`, jose that it is a number not past (give or take the clock skew).
      const keyExpiration = Math.min(
        Math.floor((claims.exp as number) * 1000),
        now() + options.keyLifetimeSeconds * 1000,
      );
      if (keyExpiration <= now())
        return refused("the token expires within the clock skew: a key would be born expired");
      return {
        ok: true,
        userIdentifier,
        roles: rolesOf(claims, settings, options.projectRoles),
        globals,
        keyExpiration,
      };
    },
  };
}
