/** An ISO 8601 UTC time, shown to the second (the full value in a tooltip and in `datetime`). */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="value-null">never</span>;
  const short = iso
    .replace("T", " ")
    .replace(/\.\d+Z?$/, "")
    .replace(/Z$/, "");
  return (
    <time class="nowrap" dateTime={iso} title={iso}>
      {short}
    </time>
  );
}
