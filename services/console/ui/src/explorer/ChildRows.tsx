/**
 * A row's nested children (a custom resource's sub-resource), paged as the server pages
 * them: the first `pagesize` come inside the row; "Show more" follows the list's own
 * `next_batch` (that parent's children only) and adds the next page below. The count says
 * when there are more than are shown.
 */
import { useState } from "preact/hooks";
import { type Client, pageOf } from "../api.ts";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { ScrollArea } from "../components/ScrollArea.tsx";
import { Value } from "../components/Value.tsx";
import { childListsOf, childNamesOf, columnsOf, metadataOf, type Row } from "./rows.ts";

export function ChildRows(props: { client: Client; title: string; list: Row[] }) {
  const first = pageOf<Row>(props.list);
  const [more, setMore] = useState<Row[]>([]);
  const [next, setNext] = useState(first.next);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>();
  const rows = [...first.items, ...more];
  const children = childNamesOf(rows);
  const columns = columnsOf(rows, children);

  async function showMore() {
    if (!next) return;
    setLoading(true);
    setError(undefined);
    try {
      const page = pageOf<Row>((await props.client.call("GET", next)).body);
      setMore((m) => [...m, ...page.items]);
      setNext(page.next);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  }

  const count = next ? `${rows.length} shown, more exist` : String(rows.length);
  return (
    <section class="children" aria-label={props.title} aria-busy={loading}>
      <h3>
        {props.title} <span class="muted">({count})</span>
      </h3>
      {rows.length === 0 ? (
        <p class="empty">None.</p>
      ) : (
        <ScrollArea label={`${props.title}: rows`}>
          <table class="grid data">
            <thead>
              <tr>
                {columns.map((c) => (
                  <th scope="col" key={c}>
                    {c}
                  </th>
                ))}
                {children.size > 0 && <th scope="col">Children</th>}
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={metadataOf(r).href ?? i}>
                  {columns.map((c) => (
                    <td key={c}>
                      <Value value={r[c]} />
                    </td>
                  ))}
                  {children.size > 0 && <td>{childCounts(r, children)}</td>}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollArea>
      )}
      <ErrorNotice error={error} onRetry={showMore} />
      {next && (
        <button type="button" onClick={showMore} disabled={loading}>
          {loading ? "Loading…" : `Show more ${props.title}`}
        </button>
      )}
      {rows.map((r, i) =>
        childListsOf(r, children)
          .filter(([, list]) => list.length > 0)
          .map(([name, list]) => (
            <ChildRows
              key={`${metadataOf(r).href ?? i}-${name}`}
              client={props.client}
              title={`${name} of ${props.title} #${i + 1}`}
              list={list}
            />
          )),
      )}
    </section>
  );
}

/** `Orders: 2`, or `Orders: 20+` when the list has a next page. */
export function childCounts(row: Row, children: Set<string>): string {
  return childListsOf(row, children)
    .map(([name, list]) => {
      const page = pageOf<Row>(list);
      return `${name}: ${page.items.length}${page.next ? "+" : ""}`;
    })
    .join(", ");
}
