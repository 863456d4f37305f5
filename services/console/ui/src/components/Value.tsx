/** Any JSON value as text (never as markup). */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * A value, isolated (`<bdi>`): its own direction is guessed from its text, and its
 * bidirectional control characters reorder nothing around it.
 */
export function Value({ value }: { value: unknown }) {
  const kind = value === null || value === undefined ? "null" : typeof value;
  return <bdi class={`value value-${kind}`}>{valueText(value)}</bdi>;
}

/** Names (roles, say) separated by commas, each isolated like a value. */
export function Names({ names }: { names: string[] }) {
  return (
    <>
      {names.map((name, i) => (
        <span key={name}>
          {i > 0 && ", "}
          <bdi>{name}</bdi>
        </span>
      ))}
    </>
  );
}
