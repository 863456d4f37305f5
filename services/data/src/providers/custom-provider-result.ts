/**
 * Turns what a custom provider's JavaScript answered into the fixed verdict
 * types of provider.ts. Provider answers are untrusted: anything malformed is
 * a failed login with the reason logged, never an exception.
 */
import { GENERIC_LOGIN_FAILURE } from "../../../../shared/contracts/internal-api.ts";
import { isPlainObject } from "../domain/model/column-values.ts";
import type { ChangePasswordResult, LoginField, LoginInfo, ProviderVerdict } from "./provider.ts";

/** The message of a failed login when the provider's own text is not shown. */
export { GENERIC_LOGIN_FAILURE };

const MAX_KEY_LIFETIME_SECONDS = 366 * 24 * 3600;
const MAX_GLOBALS_BYTES = 64 * 1024;
const MAX_USER_INFO_BYTES = 64 * 1024;
const MAX_USER_IDENTIFIER = 1024;
const MAX_MESSAGE = 500;
const CHANGE_RESULTS = new Set<ChangePasswordResult>(["success", "failure", "notSupported"]);
const DEFAULT_CHANGE_MESSAGES: Record<ChangePasswordResult, string> = {
  success: "The password was changed",
  failure: "The password could not be changed",
  notSupported: "This authentication provider does not support password changes",
};

export interface MappingContext {
  /** Roles the project defines; others are dropped. */
  projectRoles: ReadonlySet<string>;
  exposeProviderMessages: boolean;
  enablePasswordChange: boolean;
  /** The login body, for the default user identifier. */
  payload: Record<string, unknown>;
  now: number;
}

/** A mapped verdict, plus what the caller should log about it. */
export interface MappedVerdict {
  verdict: ProviderVerdict;
  /** Why the login failed or what was adjusted (never contains credentials). */
  notes: string[];
  /** True when the answer was malformed (as opposed to a provider saying "no"). */
  malformed: boolean;
}

function clip(text: string, max = MAX_MESSAGE): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, " ").trim();
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

function fail(message: string, notes: string[], malformed: boolean): MappedVerdict {
  return { verdict: { ok: false, message }, notes, malformed };
}

/**
 * keyExpiration: a Date from JavaScript arrives as its ISO string; a number is
 * epoch milliseconds, or epoch seconds when it is below 1e11 (i.e. before 1973
 * as milliseconds).
 */
export function expirationMillis(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) {
    return Math.floor(value < 1e11 ? value * 1000 : value);
  }
  if (typeof value === "string" && value.trim() !== "") {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

function jsonSize(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "");
}

export function mapAuthenticateResult(raw: unknown, ctx: MappingContext): MappedVerdict {
  const notes: string[] = [];
  const generic = GENERIC_LOGIN_FAILURE;
  if (!isPlainObject(raw)) {
    return fail(
      generic,
      [
        `authenticate returned ${raw === null ? "null" : Array.isArray(raw) ? "an array" : typeof raw}, not an object`,
      ],
      true,
    );
  }

  if (raw.errorMessage !== undefined && raw.errorMessage !== null) {
    const own = typeof raw.errorMessage === "string" ? clip(raw.errorMessage) : "";
    const message = ctx.exposeProviderMessages && own !== "" ? own : generic;
    return fail(message, ["the provider refused the login"], false);
  }

  // roleNames: an array of strings; roles the project does not define are dropped.
  if (!Array.isArray(raw.roleNames)) return fail(generic, ["roleNames is missing or not an array"], true);
  if (!raw.roleNames.every((r) => typeof r === "string")) {
    return fail(generic, ["roleNames contains something other than strings"], true);
  }
  const asked = [...new Set(raw.roleNames as string[])];
  const roles = asked.filter((r) => ctx.projectRoles.has(r));
  const unknown = asked.filter((r) => !ctx.projectRoles.has(r));
  if (unknown.length > 0)
    notes.push(`dropped roles the project does not define: ${unknown.map((r) => clip(r, 100)).join(", ")}`);

  // userIdentifier: a string (a number is accepted); default: the login's username.
  let userIdentifier: string | undefined;
  if (typeof raw.userIdentifier === "string") userIdentifier = raw.userIdentifier;
  else if (typeof raw.userIdentifier === "number" && Number.isFinite(raw.userIdentifier)) {
    userIdentifier = String(raw.userIdentifier);
  } else if (raw.userIdentifier === undefined || raw.userIdentifier === null) {
    if (typeof ctx.payload.username === "string") userIdentifier = ctx.payload.username;
  } else {
    return fail(generic, ["userIdentifier is not a string"], true);
  }
  if (userIdentifier === undefined || userIdentifier.trim() === "") {
    return fail(generic, ["no userIdentifier, and the login has no username to default to"], true);
  }
  if (userIdentifier.length > MAX_USER_IDENTIFIER) return fail(generic, ["userIdentifier is too long"], true);

  // Expiry: keyExpiration (absolute) and/or keyLifetimeSeconds; keyExpiration wins downstream.
  let keyExpiration: number | undefined;
  if (raw.keyExpiration !== undefined && raw.keyExpiration !== null) {
    keyExpiration = expirationMillis(raw.keyExpiration);
    if (keyExpiration === undefined)
      return fail(generic, ["keyExpiration is not a date or a timestamp"], true);
    if (keyExpiration <= ctx.now) return fail(generic, ["keyExpiration is in the past"], true);
    if (keyExpiration > ctx.now + MAX_KEY_LIFETIME_SECONDS * 1000) {
      return fail(generic, ["keyExpiration is more than 366 days away"], true);
    }
  }
  let keyLifetimeSeconds: number | undefined;
  if (raw.keyLifetimeSeconds !== undefined && raw.keyLifetimeSeconds !== null) {
    const s = raw.keyLifetimeSeconds;
    if (typeof s !== "number" || !Number.isFinite(s) || s < 1 || s > MAX_KEY_LIFETIME_SECONDS) {
      return fail(generic, ["keyLifetimeSeconds is not a number of seconds between 1 and 366 days"], true);
    }
    keyLifetimeSeconds = Math.floor(s);
  }

  // userData -> globals; userInfo passed through.
  let globals: Record<string, unknown> = {};
  if (raw.userData !== undefined && raw.userData !== null) {
    if (!isPlainObject(raw.userData)) return fail(generic, ["userData is not an object"], true);
    if (jsonSize(raw.userData) > MAX_GLOBALS_BYTES)
      return fail(generic, ["userData is larger than 64 KiB"], true);
    globals = raw.userData;
  }
  let userInfo: Record<string, unknown> | undefined;
  if (raw.userInfo !== undefined && raw.userInfo !== null) {
    if (!isPlainObject(raw.userInfo)) return fail(generic, ["userInfo is not an object"], true);
    if (jsonSize(raw.userInfo) > MAX_USER_INFO_BYTES)
      return fail(generic, ["userInfo is larger than 64 KiB"], true);
    userInfo = raw.userInfo;
  }

  const verdict: ProviderVerdict = { ok: true, userIdentifier, roles, globals };
  if (keyExpiration !== undefined) verdict.keyExpiration = keyExpiration;
  if (keyLifetimeSeconds !== undefined) verdict.keyLifetimeSeconds = keyLifetimeSeconds;
  if (userInfo !== undefined) verdict.userInfo = userInfo;

  if (ctx.enablePasswordChange) {
    let result: ChangePasswordResult = "notSupported";
    let message: string | undefined;
    const r = raw.changePasswordResult;
    if (r !== undefined && r !== null) {
      if (typeof r === "string" && CHANGE_RESULTS.has(r as ChangePasswordResult)) {
        result = r as ChangePasswordResult;
      } else {
        result = "failure";
        message = "The authentication provider gave an unrecognised password change result";
        notes.push("changePasswordResult is not success, failure or notSupported");
      }
    }
    if (
      message === undefined &&
      typeof raw.changePasswordMessage === "string" &&
      raw.changePasswordMessage.trim()
    ) {
      message = clip(raw.changePasswordMessage);
    }
    verdict.changePasswordResult = result;
    verdict.changePasswordMessage = message ?? DEFAULT_CHANGE_MESSAGES[result];
  }
  return { verdict, notes, malformed: false };
}

/** The login form when the provider defines no getLoginInfo. */
export const DEFAULT_LOGIN_INFO: LoginInfo = {
  fields: [
    { name: "username", display: "Username", type: "text", length: 40 },
    { name: "password", display: "Password", type: "password", length: 40 },
  ],
  links: [],
};

/** Validates getLoginInfo's answer; returns the reason when it is unusable. */
export function mapLoginInfo(raw: unknown): { info: LoginInfo } | { problem: string } {
  if (!isPlainObject(raw)) return { problem: "getLoginInfo did not return an object" };
  if (!Array.isArray(raw.fields)) return { problem: "getLoginInfo: fields is not an array" };
  if (raw.fields.length > 50) return { problem: "getLoginInfo: more than 50 fields" };
  const fields: LoginField[] = [];
  for (const f of raw.fields) {
    if (!isPlainObject(f) || typeof f.name !== "string" || f.name === "") {
      return { problem: "getLoginInfo: every field needs a name" };
    }
    const field: LoginField = {
      name: clip(f.name, 100),
      display: typeof f.display === "string" ? clip(f.display, 200) : f.name,
      type: typeof f.type === "string" ? clip(f.type, 40) : "text",
    };
    if (typeof f.description === "string") field.description = clip(f.description, 1000);
    if (typeof f.length === "number" && Number.isFinite(f.length) && f.length > 0)
      field.length = Math.floor(f.length);
    fields.push(field);
  }
  const links: LoginInfo["links"] = [];
  if (raw.links !== undefined && raw.links !== null) {
    if (!Array.isArray(raw.links)) return { problem: "getLoginInfo: links is not an array" };
    for (const l of raw.links.slice(0, 50)) {
      if (!isPlainObject(l) || typeof l.href !== "string")
        return { problem: "getLoginInfo: every link needs an href" };
      links.push({
        display: typeof l.display === "string" ? clip(l.display, 200) : l.href,
        href: clip(l.href, 2000),
      });
    }
  }
  return { info: { fields, links } };
}
