/** Whose changes a listing (audit entries, revisions) shows: the operator's, or one administrator's. */
export type ActorFilter = { kind: "operator" } | { kind: "admin"; login: string };

/** The condition on a stored actor field (an audit entry's `actor`, a revision's `by`). */
export function actorCondition(field: string, by: ActorFilter | undefined): Record<string, string> {
  if (!by) return {};
  return by.kind === "operator"
    ? { [`${field}.kind`]: "operator" }
    : { [`${field}.kind`]: "admin", [`${field}.login`]: by.login };
}
