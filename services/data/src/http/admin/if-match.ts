/**
 * `If-Match` on changes of a project: `"<revision>"` (the project's `ETag`), a
 * list of them, or `*` (any revision: the project must exist). Weak tags
 * (`W/"3"`) never match, as HTTP's strong comparison says.
 */
import { errors } from "../../../../../shared/errors.ts";
import type { RevisionPrecondition } from "../../domain/project-changes.ts";

export function revisionETag(revision: number): string {
  return `"${revision}"`;
}

/** The precondition of an `If-Match` header's value (empty: none). */
export function parseIfMatch(value: string): RevisionPrecondition | undefined {
  const header = value.trim();
  if (header === "") return undefined;
  if (header === "*") return { anyRevision: true };
  const revisions: number[] = [];
  for (const part of header.split(",").map((p) => p.trim())) {
    const tag = /^(W\/)?"([^"]*)"$/.exec(part);
    if (!tag) throw errors.malformed(`If-Match must be '*' or entity tags such as "3" (the project's ETag)`);
    if (!tag[1] && /^[1-9]\d{0,8}$/.test(tag[2]!)) revisions.push(Number(tag[2]));
  }
  return { revisions };
}
