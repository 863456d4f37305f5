/**
 * Previous / next page over `next_batch` links (the server's, followed as they are), and
 * which page is shown — a status, so that turning a page is announced.
 */
import type { Paged } from "./usePaged.ts";

export function Pager(props: { label: string; paged: Paged<unknown> }) {
  const { paged } = props;
  return (
    <nav class="pager" aria-label={props.label}>
      <button type="button" disabled={!paged.hasPrevious} onClick={paged.goPrevious}>
        ← Previous page
      </button>
      <button type="button" disabled={!paged.next} onClick={paged.goNext}>
        Next page →
      </button>
      {(paged.hasPrevious || paged.next) && (
        <span class="pager-page" role="status">
          Page {paged.page}
        </span>
      )}
    </nav>
  );
}
