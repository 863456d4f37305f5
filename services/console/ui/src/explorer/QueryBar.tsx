/** The query of the grid: Filter and Order in the filter language, rows per page, Apply. */
import { useState } from "preact/hooks";
import { MAX_PAGESIZE } from "./explorer-url.ts";
import { QueryInput, type QueryInputError } from "./QueryInput.tsx";

export interface Query {
  filter: string;
  order: string;
  pagesize: number;
}

export function QueryBar(props: {
  query: Query;
  onApply: (q: Query) => void;
  errorAt: (name: "filter" | "order") => QueryInputError | undefined;
}) {
  // The query as typed; the grid remounts this bar whenever the applied query changes.
  const [draft, setDraft] = useState({ ...props.query, pagesize: String(props.query.pagesize) });
  return (
    <form
      class="toolbar"
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply({ filter: draft.filter, order: draft.order, pagesize: Number(draft.pagesize) });
      }}
    >
      <QueryInput
        name="filter"
        label="Filter"
        placeholder="balance > 100 and name like 'A%'"
        value={draft.filter}
        onInput={(filter) => setDraft((d) => ({ ...d, filter }))}
        error={props.errorAt("filter")}
      />
      <QueryInput
        name="order"
        label="Order"
        placeholder="balance desc, name"
        value={draft.order}
        onInput={(order) => setDraft((d) => ({ ...d, order }))}
        error={props.errorAt("order")}
      />
      <div class="field narrow">
        <label for="query-pagesize">Rows per page</label>
        <input
          id="query-pagesize"
          type="number"
          min={1}
          max={MAX_PAGESIZE}
          required
          value={draft.pagesize}
          onInput={(e) => setDraft((d) => ({ ...d, pagesize: (e.target as HTMLInputElement).value }))}
        />
      </div>
      <button type="submit" class="primary">
        Apply
      </button>
    </form>
  );
}
