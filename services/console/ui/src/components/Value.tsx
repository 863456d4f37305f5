/** Any JSON value as text (never as markup). */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

export function Value({ value }: { value: unknown }) {
  const kind = value === null || value === undefined ? "null" : typeof value;
  return <span class={`value value-${kind}`}>{valueText(value)}</span>;
}
