/**
 * `ETag` and `If-Match` on a project: the tag is opaque to clients and names the
 * project's incarnation and revision (domain/project-changes.ts), so a tag
 * taken before the project was deleted never matches the one created after it.
 * `If-Match` takes such tags, a list of them, or `*` (the project must exist).
 * Weak tags (`W/"…"`) never match, as HTTP's strong comparison says.
 */
import { errors } from "../../../../../shared/errors.ts";
import { type ProjectPrecondition, projectTag } from "../../domain/project-changes.ts";

export function projectETag(project: { uid: string; revision: number }): string {
  return `"${projectTag(project)}"`;
}

/** The precondition of an `If-Match` header's value (empty: none). */
export function parseIfMatch(value: string): ProjectPrecondition | undefined {
  const header = value.trim();
  if (header === "") return undefined;
  if (header === "*") return { anyRevision: true };
  const tags: string[] = [];
  for (const part of header.split(",").map((p) => p.trim())) {
    const tag = /^(W\/)?"([\x21\x23-\x7e]*)"$/.exec(part);
    if (!tag)
      throw errors.malformed(`If-Match must be '*' or entity tags (the project's ETag, quotes included)`);
    if (!tag[1]) tags.push(tag[2]!);
  }
  return { tags };
}
