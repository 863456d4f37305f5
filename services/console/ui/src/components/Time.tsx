/**
 * Times are UTC everywhere in the console, and say so: shown as `2026-01-31 17:05:09 UTC`
 * (the full value in a tooltip and in `datetime`), and typed as UTC too (`fromUtcInput`).
 */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="value-null">never</span>;
  const short = iso
    .replace("T", " ")
    .replace(/\.\d+Z?$/, "")
    .replace(/Z$/, "");
  return (
    <time class="nowrap" dateTime={iso} title={iso}>
      {short} UTC
    </time>
  );
}

/** A `datetime-local` input's value, read as UTC (not as the browser's time zone). */
export function fromUtcInput(value: string): string {
  return new Date(`${value}Z`).toISOString();
}
