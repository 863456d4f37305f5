/**
 * A page of a table's or resource's rows: filter and order in the filter language
 * (a 4002 error is shown at the input and the position it names), page size, and
 * paging by `next_batch`.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, type Client } from "../api.ts";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { Pager } from "../components/Pager.tsx";
import { ScrollArea } from "../components/ScrollArea.tsx";
import { usePaged } from "../components/usePaged.ts";
import { Value } from "../components/Value.tsx";
import { type QueryErrorPlace, queryErrorPlace } from "./query-error.ts";
import { childListsOf, columnsOf, type Row } from "./rows.ts";

interface Query {
  filter: string;
  order: string;
  pagesize: string;
}

function QueryInput(props: {
  name: "filter" | "order";
  label: string;
  value: string;
  onInput: (v: string) => void;
  placeholder: string;
  /** Set anew by each failed request: focus moves to the input once per failure, not per render. */
  error: { message: string; place: QueryErrorPlace; failure: unknown } | undefined;
}) {
  const ref = useRef<HTMLInputElement>(null);
  const id = `query-${props.name}`;
  const { error } = props;
  useLayoutEffect(() => {
    if (!error || !ref.current) return;
    ref.current.focus();
    const at = error.place.offset ?? 0;
    ref.current.setSelectionRange(at, Math.min(at + 1, props.value.length));
  }, [error?.failure]);
  const at = error?.place.offset;
  return (
    <div class="field grow">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        ref={ref}
        class="code"
        value={props.value}
        placeholder={props.placeholder}
        aria-invalid={error ? "true" : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
      {error && (
        <div id={`${id}-error`} class="field-error" role="alert">
          <p>{error.message}</p>
          {at !== undefined && (
            <p class="code caret" aria-hidden="true">
              {props.value.slice(0, at)}
              <mark>{props.value.slice(at, at + 1) || " "}</mark>
              {props.value.slice(at + 1)}
            </p>
          )}
        </div>
      )}
    </div>
  );
}

export function RowGrid(props: {
  client: Client;
  collectionPath: string;
  refresh: number;
  onOpen: (row: Row) => void;
}) {
  const [draft, setDraft] = useState<Query>({ filter: "", order: "", pagesize: "20" });
  const [query, setQuery] = useState<Query>(draft);
  // Another table: its query starts empty, reset before anything can be typed into it.
  useLayoutEffect(() => {
    const fresh = { filter: "", order: "", pagesize: "20" };
    setDraft(fresh);
    setQuery(fresh);
  }, [props.collectionPath]);

  const params = new URLSearchParams({ pagesize: query.pagesize });
  if (query.filter.trim()) params.set("filter", query.filter);
  if (query.order.trim()) params.set("order", query.order);
  const rows = usePaged<Row>(props.client, `${props.collectionPath}?${params}`);
  useEffect(() => {
    if (props.refresh) rows.reload();
  }, [props.refresh]);

  const failure = rows.error instanceof ApiFailure ? rows.error : undefined;
  const place = failure?.errorCode === 4002 ? queryErrorPlace(failure.message) : undefined;
  const errorAt = (name: "filter" | "order") =>
    place && (place.parameter === name || place.parameter === `sys${name}`)
      ? { message: failure!.message, place, failure }
      : undefined;
  const columns = rows.items ? columnsOf(rows.items) : [];

  return (
    <div class="rows" aria-busy={rows.loading}>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ ...draft });
        }}
      >
        <QueryInput
          name="filter"
          label="Filter"
          placeholder="balance > 100 and name like 'A%'"
          value={draft.filter}
          onInput={(filter) => setDraft((d) => ({ ...d, filter }))}
          error={errorAt("filter")}
        />
        <QueryInput
          name="order"
          label="Order"
          placeholder="balance desc, name"
          value={draft.order}
          onInput={(order) => setDraft((d) => ({ ...d, order }))}
          error={errorAt("order")}
        />
        <div class="field narrow">
          <label for="query-pagesize">Rows per page</label>
          <input
            id="query-pagesize"
            type="number"
            min={1}
            max={5000}
            required
            value={draft.pagesize}
            onInput={(e) => setDraft((d) => ({ ...d, pagesize: (e.target as HTMLInputElement).value }))}
          />
        </div>
        <button type="submit" class="primary">
          Apply
        </button>
      </form>
      {/* A filter's or order's error is shown at its input instead. */}
      <LoadStatus what="rows" load={place ? { ...rows, error: undefined } : rows} />
      {rows.items?.length === 0 && <p class="empty">No rows.</p>}
      {rows.items && rows.items.length > 0 && (
        <ScrollArea label="Rows">
          <table class="grid data">
            <thead>
              <tr>
                <th scope="col">
                  <span class="sr-only">Open</span>
                </th>
                {columns.map((c) => (
                  <th scope="col" key={c}>
                    {c}
                  </th>
                ))}
                <th scope="col">Children</th>
              </tr>
            </thead>
            <tbody>
              {rows.items.map((row, i) => (
                <tr key={row["@metadata"]?.href ?? i}>
                  <td>
                    <button type="button" class="small" onClick={() => props.onOpen(row)}>
                      Open
                    </button>
                  </td>
                  {columns.map((c) => (
                    <td key={c}>
                      <Value value={row[c]} />
                    </td>
                  ))}
                  <td>
                    {childListsOf(row)
                      .map(
                        ([name, list]) =>
                          `${name}: ${list.filter((x) => !("next_batch" in (x["@metadata"] ?? {}))).length}`,
                      )
                      .join(", ")}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollArea>
      )}
      <Pager label="Row pages" paged={rows} />
    </div>
  );
}
