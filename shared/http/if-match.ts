/**
 * `ETag` and `If-Match` on the admin API (both services). Entity tags are
 * opaque to clients: a tag names the incarnation of the record's owner and the
 * record's state, so a tag taken before a deletion never matches what is
 * created again under the same name. `If-Match` takes tags, a list of them, or
 * `*` (the record must exist); weak tags (`W/"…"`) never match, as HTTP's
 * strong comparison says. Every admin write evaluates it where the write is
 * serialised, so of two writes made against the same tag one fails with 412.
 */
import { createHash } from "node:crypto";
import { errors } from "../errors.ts";

/** What `If-Match` asks of a record: that it exists, or that its tag is one of these. */
export type Precondition = { anyState: true } | { tags: string[] };

/** The precondition of an `If-Match` header's value (empty: none); 400/4001 when it is not one. */
export function parseIfMatch(value: string): Precondition | undefined {
  const header = value.trim();
  if (header === "") return undefined;
  if (header === "*") return { anyState: true };
  const tags: string[] = [];
  for (const part of header.split(",").map((p) => p.trim())) {
    const tag = /^(W\/)?"([\x21\x23-\x7e]*)"$/.exec(part);
    if (!tag) throw errors.malformed("If-Match must be '*' or entity tags (an ETag, quotes included)");
    if (!tag[1]) tags.push(tag[2] ?? "");
  }
  return { tags };
}

/** Whether a record whose tag is `current` (undefined: no record) meets the precondition (none: met). */
export function preconditionMet(
  precondition: Precondition | undefined,
  current: string | undefined,
): boolean {
  if (precondition === undefined) return true;
  return current !== undefined && ("anyState" in precondition || precondition.tags.includes(current));
}

/** 412/4121 (naming `what`) unless `preconditionMet`. */
export function checkIfMatch(
  precondition: Precondition | undefined,
  current: string | undefined,
  what: string,
): void {
  if (preconditionMet(precondition, current)) return;
  throw errors.preconditionFailed(
    current === undefined
      ? `${what} does not exist, so it matches no If-Match`
      : `${what} is not in the state the request names (If-Match): someone changed it first`,
  );
}

/** An opaque tag of a record's state: a hash of its owner's incarnation and what it holds. */
export function stateTag(incarnation: string, state: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify([incarnation, state]))
    .digest("base64url")
    .slice(0, 27);
}

/** The `ETag` header's value for a tag. */
export function etag(tag: string): string {
  return `"${tag}"`;
}
