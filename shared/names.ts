/**
 * The one grammar of names (docs/names.md): every name that appears in a URL or
 * becomes a property name — accounts, projects, versions, tables, columns,
 * resources, libraries, roles, built-in users, administrators, key ids — and the
 * string key values of rows (they appear in hrefs). Used by both services and the
 * console, so it imports nothing.
 *
 * Every name and every path segment obeys the segment rules: not empty, not only
 * dots (clients resolve `.` and `..` away), no control or bidirectional-override
 * characters, no lone surrogates. Names are also never `__proto__`, `constructor`
 * or `prototype`, and each kind has its own characters and length.
 */

export type NameKind =
  | "account"
  | "project"
  | "version"
  | "table"
  | "resource"
  | "library"
  | "column"
  | "role"
  | "user"
  | "admin"
  | "keyId";

/** Accounts, projects, versions, tables, resources and libraries. */
export const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;
/** Stored field names: no `$`, no `.`, no leading `_` (reserved for Tessera's own fields). */
export const COLUMN_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
/** Built-in users' and administrators' login names. */
const LOGIN_PATTERN = /^[A-Za-z0-9_.@+-]{1,128}$/;
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]+$/;
const ROLE_MAX_LENGTH = 100;

const PATTERNS: Record<Exclude<NameKind, "role">, { pattern: RegExp; says: string }> = {
  account: { pattern: NAME_PATTERN, says: "[A-Za-z][A-Za-z0-9_-]{0,62}" },
  project: { pattern: NAME_PATTERN, says: "[A-Za-z][A-Za-z0-9_-]{0,62}" },
  version: { pattern: NAME_PATTERN, says: "[A-Za-z][A-Za-z0-9_-]{0,62}" },
  table: { pattern: NAME_PATTERN, says: "[A-Za-z][A-Za-z0-9_-]{0,62}" },
  resource: { pattern: NAME_PATTERN, says: "[A-Za-z][A-Za-z0-9_-]{0,62}" },
  library: { pattern: NAME_PATTERN, says: "[A-Za-z][A-Za-z0-9_-]{0,62}" },
  column: { pattern: COLUMN_NAME_PATTERN, says: "[A-Za-z][A-Za-z0-9_]{0,62}" },
  user: { pattern: LOGIN_PATTERN, says: "1 to 128 characters of A-Z a-z 0-9 _ . @ + -" },
  admin: { pattern: LOGIN_PATTERN, says: "1 to 128 characters of A-Z a-z 0-9 _ . @ + -" },
  keyId: { pattern: KEY_ID_PATTERN, says: "characters of A-Z a-z 0-9 _ -" },
};

/** Property names that reach an object's prototype machinery. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** A surrogate not part of a pair (in `u` mode, a pair is one code point and does not match). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
/** C0 and C1 controls, DEL, and the bidirectional marks, embeddings, overrides and isolates. */
const CONTROL_OR_BIDI = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** What breaks the segment rules in `text` (undefined: nothing). */
export function segmentProblem(text: string): string | undefined {
  if (text === "") return "must not be empty";
  if (/^\.+$/.test(text)) return "must not consist of dots only";
  if (LONE_SURROGATE.test(text)) return "must not contain a lone surrogate";
  if (CONTROL_OR_BIDI.test(text)) return "must not contain control or bidirectional-override characters";
  return undefined;
}

/** What breaks the grammar for a name of `kind` (undefined: a valid name). */
export function nameProblem(kind: NameKind, name: string): string | undefined {
  const problem = segmentProblem(name);
  if (problem) return problem;
  if (RESERVED_NAMES.has(name)) return `'${name}' is reserved`;
  if (kind === "role")
    return name.length > ROLE_MAX_LENGTH ? `must be at most ${ROLE_MAX_LENGTH} characters` : undefined;
  const { pattern, says } = PATTERNS[kind];
  return pattern.test(name) ? undefined : `must match ${says}`;
}

/** True when `name` is a valid name of `kind`. */
export function isNameOf(kind: NameKind, name: string): boolean {
  return nameProblem(kind, name) === undefined;
}

/**
 * True when `name` may address a stored account, project or version: the grammar's
 * names, and those stored before it (they stay readable; docs/names.md).
 */
export function isValidName(name: string | undefined): name is string {
  return name !== undefined && NAME_PATTERN.test(name);
}

/**
 * True when `name` may address a stored record of `kind`: names of the grammar and
 * names that an earlier release accepted (read and deleted, never written again).
 */
export function isStoredName(kind: NameKind, name: string): boolean {
  if (isNameOf(kind, name)) return true;
  if (kind === "role") return name.length >= 1 && name.length <= ROLE_MAX_LENGTH;
  return PATTERNS[kind].pattern.test(name);
}

/**
 * True when a segment of the URL path is `.` or `..`, written plainly or percent-encoded
 * (`%2E%2E`): clients (browsers, `fetch`, curl) resolve it away, so such a request would
 * reach another URL (`DELETE …/users/..` → `DELETE …/projects/p/`). Never send one.
 */
export function pathResolvesAway(path: string): boolean {
  return (path.split(/[?#]/, 1)[0] ?? "").split("/").some((segment) => /^(\.|%2e){1,2}$/i.test(segment));
}
