/**
 * Turns what a custom provider's JavaScript answered into the fixed verdict
 * types of provider.ts. Provider answers are untrusted: each is parsed with its
 * schema below, and anything malformed is a failed login with the reasons
 * logged, never an exception.
 */
import { z } from "zod";
import { REFUSED, type VerdictFailure } from "../../../../shared/contracts/internal-api.ts";
import { safeText } from "../../../../shared/safe-text.ts";
import { isPlainObject } from "../domain/model/column-values.ts";
import type { ChangePasswordResult, LoginField, LoginInfo, ProviderVerdict } from "./provider.ts";

const MAX_KEY_LIFETIME_SECONDS = 366 * 24 * 3600;
const MAX_GLOBALS_BYTES = 64 * 1024;
const MAX_USER_INFO_BYTES = 64 * 1024;
const MAX_USER_IDENTIFIER = 1024;
const MAX_MESSAGE = 500;
const DEFAULT_CHANGE_MESSAGES: Record<ChangePasswordResult, string> = {
  success: "The password was changed",
  failure: "The password could not be changed",
  notSupported: "This authentication provider does not support password changes",
};

const LIFETIME_PROBLEM = "keyLifetimeSeconds is not a number of seconds between 1 and 366 days";

/** A JSON object, kept as it is (not copied: a copy could give `__proto__` a meaning). */
const jsonObject = (error: string) => z.custom<Record<string, unknown>>(isPlainObject, { error });

/**
 * What `authenticate` answers when it does not refuse the login (docs/authentication.md).
 * A null counts as absent; each part's message is the note logged when it is wrong.
 */
const grantSchema = z.object({
  /** Roles the project does not define are dropped. */
  roleNames: z.array(z.string({ error: "roleNames contains something other than strings" }), {
    error: "roleNames is missing or not an array",
  }),
  /** A string (a number is accepted); default: the login's username. */
  userIdentifier: z
    .union([z.string(), z.number().transform(String)], { error: "userIdentifier is not a string" })
    .nullish(),
  /** A date (ISO text) or a timestamp: see expirationMillis. */
  keyExpiration: z
    .union([z.number(), z.string()], { error: "keyExpiration is not a date or a timestamp" })
    .nullish(),
  keyLifetimeSeconds: z
    .number({ error: LIFETIME_PROBLEM })
    .min(1, LIFETIME_PROBLEM)
    .max(MAX_KEY_LIFETIME_SECONDS, LIFETIME_PROBLEM)
    .nullish(),
  /** Becomes the key's globals. */
  userData: jsonObject("userData is not an object")
    .refine((v) => jsonSize(v) <= MAX_GLOBALS_BYTES, "userData is larger than 64 KiB")
    .nullish(),
  userInfo: jsonObject("userInfo is not an object")
    .refine((v) => jsonSize(v) <= MAX_USER_INFO_BYTES, "userInfo is larger than 64 KiB")
    .nullish(),
});

const changeResultSchema = z.enum(["success", "failure", "notSupported"]);

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

/** A provider's text as one line, cut at `max` characters. */
const clip = (text: string, max = MAX_MESSAGE): string => safeText(text, max, "join");

function fail(verdict: VerdictFailure, notes: string[], malformed: boolean): MappedVerdict {
  return { verdict, notes, malformed };
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
  if (!isPlainObject(raw)) {
    return fail(
      REFUSED,
      [
        `authenticate returned ${raw === null ? "null" : Array.isArray(raw) ? "an array" : typeof raw}, not an object`,
      ],
      true,
    );
  }

  if (raw.errorMessage !== undefined && raw.errorMessage !== null) {
    const own = typeof raw.errorMessage === "string" ? clip(raw.errorMessage) : "";
    const verdict: VerdictFailure =
      ctx.exposeProviderMessages && own !== ""
        ? { ok: false, reason: "providerMessage", message: own }
        : REFUSED;
    return fail(verdict, ["the provider refused the login"], false);
  }

  const parsed = grantSchema.safeParse(raw);
  if (!parsed.success) return fail(REFUSED, [...new Set(parsed.error.issues.map((i) => i.message))], true);
  const grant = parsed.data;

  const asked = [...new Set(grant.roleNames)];
  const roles = asked.filter((r) => ctx.projectRoles.has(r));
  const unknown = asked.filter((r) => !ctx.projectRoles.has(r));
  if (unknown.length > 0)
    notes.push(`dropped roles the project does not define: ${unknown.map((r) => clip(r, 100)).join(", ")}`);

  const userIdentifier =
    grant.userIdentifier ?? (typeof ctx.payload.username === "string" ? ctx.payload.username : undefined);
  if (userIdentifier === undefined || userIdentifier.trim() === "") {
    return fail(REFUSED, ["no userIdentifier, and the login has no username to default to"], true);
  }
  if (userIdentifier.length > MAX_USER_IDENTIFIER) return fail(REFUSED, ["userIdentifier is too long"], true);

  // Expiry: keyExpiration (absolute) and/or keyLifetimeSeconds; keyExpiration wins downstream.
  let keyExpiration: number | undefined;
  if (grant.keyExpiration !== undefined && grant.keyExpiration !== null) {
    keyExpiration = expirationMillis(grant.keyExpiration);
    if (keyExpiration === undefined)
      return fail(REFUSED, ["keyExpiration is not a date or a timestamp"], true);
    if (keyExpiration <= ctx.now) return fail(REFUSED, ["keyExpiration is in the past"], true);
    if (keyExpiration > ctx.now + MAX_KEY_LIFETIME_SECONDS * 1000) {
      return fail(REFUSED, ["keyExpiration is more than 366 days away"], true);
    }
  }
  const keyLifetimeSeconds =
    grant.keyLifetimeSeconds == null ? undefined : Math.floor(grant.keyLifetimeSeconds);
  const globals = grant.userData ?? {};
  const userInfo = grant.userInfo ?? undefined;

  const verdict: ProviderVerdict = { ok: true, userIdentifier, roles, globals };
  if (keyExpiration !== undefined) verdict.keyExpiration = keyExpiration;
  if (keyLifetimeSeconds !== undefined) verdict.keyLifetimeSeconds = keyLifetimeSeconds;
  if (userInfo !== undefined) verdict.userInfo = userInfo;

  if (ctx.enablePasswordChange) {
    let result: ChangePasswordResult = "notSupported";
    let message: string | undefined;
    const r = raw.changePasswordResult;
    if (r !== undefined && r !== null) {
      const known = changeResultSchema.safeParse(r);
      if (known.success) {
        result = known.data;
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

const NAMELESS_FIELD = "getLoginInfo: every field needs a name";
const LINK_WITHOUT_HREF = "getLoginInfo: every link needs an href";

/** One field of getLoginInfo's form: a name it must have; a part of another type is left to its default. */
const loginFieldSchema = z.object(
  {
    name: z.string({ error: NAMELESS_FIELD }).min(1, NAMELESS_FIELD),
    display: z.string().optional().catch(undefined),
    type: z.string().optional().catch(undefined),
    description: z.string().optional().catch(undefined),
    length: z.number().positive().optional().catch(undefined),
  },
  { error: NAMELESS_FIELD },
);
const loginLinkSchema = z.object(
  { href: z.string({ error: LINK_WITHOUT_HREF }), display: z.string().optional().catch(undefined) },
  { error: LINK_WITHOUT_HREF },
);

/** getLoginInfo's answer: its fields (at most 50), and its links (the first 50 are read). */
const loginInfoSchema = z.object({
  fields: z
    .array(z.unknown(), { error: "getLoginInfo: fields is not an array" })
    .max(50, "getLoginInfo: more than 50 fields")
    .pipe(z.array(loginFieldSchema)),
  links: z
    .array(z.unknown(), { error: "getLoginInfo: links is not an array" })
    .transform((links) => links.slice(0, 50))
    .pipe(z.array(loginLinkSchema))
    .nullish(),
});

/** Validates getLoginInfo's answer; returns the reason when it is unusable. */
export function mapLoginInfo(raw: unknown): { info: LoginInfo } | { problem: string } {
  if (!isPlainObject(raw)) return { problem: "getLoginInfo did not return an object" };
  const parsed = loginInfoSchema.safeParse(raw);
  if (!parsed.success) return { problem: parsed.error.issues[0]?.message ?? "getLoginInfo: unusable" };
  const fields = parsed.data.fields.map((f) => {
    const field: LoginField = {
      name: clip(f.name, 100),
      display: f.display === undefined ? f.name : clip(f.display, 200),
      type: f.type === undefined ? "text" : clip(f.type, 40),
    };
    if (f.description !== undefined) field.description = clip(f.description, 1000);
    if (f.length !== undefined) field.length = Math.floor(f.length);
    return field;
  });
  const links = (parsed.data.links ?? []).map((l) => ({
    display: l.display === undefined ? l.href : clip(l.display, 200),
    href: clip(l.href, 2000),
  }));
  return { info: { fields, links } };
}
