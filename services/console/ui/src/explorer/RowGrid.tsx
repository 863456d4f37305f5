/**
 * The rows of a table or resource in a grid that stays quick with any number of rows:
 * only the rows in view (and a few around them) are in the DOM, pages of `pagesize` load
 * as the user scrolls towards the end, every row is one line high (cells cut with an
 * ellipsis, their full value on demand), the header sticks, columns resize and sort.
 * Filter and order are in the filter language (a 4002 error is shown at its input), and a
 * builder writes conditions into the filter. The page in view is kept in the URL.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiFailure, type Client } from "../api.ts";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { BulkDelete } from "./BulkDelete.tsx";
import { childCounts } from "./ChildRows.tsx";
import { CsvExport } from "./CsvExport.tsx";
import { CsvImport } from "./CsvImport.tsx";
import type { ColumnInfo } from "./columns.ts";
import type { ExplorerView } from "./explorer-url.ts";
import { FilterBuilder } from "./FilterBuilder.tsx";
import { FullValue } from "./FullValue.tsx";
import { andCondition, nextOrder, sortOf } from "./filter-text.ts";
import { GridCell } from "./GridCell.tsx";
import { defaultWidth, HeaderCell } from "./HeaderCell.tsx";
import { type Query, QueryBar } from "./QueryBar.tsx";
import { queryErrorPlace } from "./query-error.ts";
import { childNamesOf, columnsOf, metadataOf, type Row } from "./rows.ts";
import type { WriteOutcome } from "./TxSummary.tsx";
import { guessedType } from "./typed-values.ts";
import { useRowPages } from "./useRowPages.ts";
import { useRowWindow } from "./useRowWindow.ts";

/** Every row's height in px (styles.css: `table.virtual tr`). */
export const ROW_HEIGHT = 36;
const SELECT_WIDTH = 44;
const OPEN_WIDTH = 72;
const CHILDREN_WIDTH = 180;

const fmt = (n: number) => n.toLocaleString("en");

export function RowGrid(props: {
  client: Client;
  collectionPath: string;
  name: string;
  /** undefined: a JavaScript resource (no definition: columns from the rows, read-only). */
  columns: ColumnInfo[] | undefined;
  /** No selection, import or delete (an account reader's session). */
  readOnly?: boolean | undefined;
  childNames: string[];
  view: ExplorerView;
  onView: (change: Partial<ExplorerView>, replace?: boolean) => void;
  refresh: number;
  openHref: string | undefined;
  onOpen: (row: Row) => void;
  onWritten: (outcome: WriteOutcome) => void;
}) {
  const { onView } = props;
  // A query the user asked for is tried before it goes into the address: only one the server
  // accepts becomes the address (and a history entry); a refused one shows its error at its
  // input while the address keeps the last accepted query.
  const [trial, setTrial] = useState<Query>();
  const view: ExplorerView = trial ? { ...props.view, ...trial, page: 1 } : props.view;
  const tryQuery = (change: Partial<Query>) =>
    setTrial({ filter: view.filter, order: view.order, pagesize: view.pagesize, ...change });
  // The address changed by itself (Back, a link): what it says wins over a query being tried.
  useEffect(
    () => setTrial(undefined),
    [props.view.filter, props.view.order, props.view.pagesize, props.view.page],
  );
  const params = new URLSearchParams({ pagesize: String(view.pagesize) });
  if (view.filter.trim()) params.set("filter", view.filter);
  if (view.order.trim()) params.set("order", view.order);
  const first = `${props.collectionPath}?${params}`;
  const pages = useRowPages(props.client, first);
  const { rows } = pages;
  // The query tried has its first page: it is accepted, into the address.
  useEffect(() => {
    if (trial && !pages.loading && !pages.error && pages.first === first) onView({ ...trial, page: 1 });
  }, [trial, pages.loading, pages.error, pages.first, first]);
  // After a write elsewhere (a change of `refresh`, not its value when the grid appears).
  const refreshed = useRef(props.refresh);
  useEffect(() => {
    if (refreshed.current === props.refresh) return;
    refreshed.current = props.refresh;
    pages.restart();
  }, [props.refresh]);

  const [box, setBox] = useState<HTMLElement | null>(null);
  const win = useRowWindow(box, rows.length, ROW_HEIGHT);
  const [widths, setWidths] = useState<Record<string, number>>({});
  const [selected, setSelected] = useState<Map<string, Row>>(new Map());
  const [full, setFull] = useState<{ title: string; value: unknown }>();
  // The grid's current cell (row index in `rows`, column index in the row): the one Tab stop
  // of the rows; the arrow keys move it, Enter opens its row.
  const [cursor, setCursor] = useState({ row: 0, col: 0 });
  // The header's controls (select all, each column's sort button) are one Tab stop too: this
  // one of them; ←/→, Home and End move between them.
  const [headerStop, setHeaderStop] = useState(0);
  const moved = useRef(false);

  const children = useMemo(
    () => childNamesOf(rows.slice(0, 200), props.childNames),
    [rows, props.childNames],
  );
  const columns: ColumnInfo[] = useMemo(
    () =>
      props.columns ??
      columnsOf(rows.slice(0, 200), children).map((name) => ({
        name,
        type: guessedType(rows.find((r) => r[name] !== null && r[name] !== undefined)?.[name]),
        required: false,
        generated: false,
        key: false,
      })),
    [props.columns, rows, children],
  );
  const widthOf = (c: ColumnInfo) => widths[c.name] ?? defaultWidth(c.type);
  const writable = props.columns !== undefined && !props.readOnly;
  const hasChildren = children.size > 0;
  const tableWidth =
    (writable ? SELECT_WIDTH : 0) +
    OPEN_WIDTH +
    columns.reduce((sum, c) => sum + widthOf(c), 0) +
    (hasChildren ? CHILDREN_WIDTH : 0);

  // Another query: back to the top, nothing selected.
  useLayoutEffect(() => {
    if (box) box.scrollTop = 0;
    setSelected(new Map());
  }, [first]);

  // The page in the URL (a link, Back, Next page) is brought into view, loading up to it.
  const pageStart = (view.page - 1) * view.pagesize;
  const pageInView = Math.floor(win.firstVisible / view.pagesize) + 1;
  const pending = useRef<number | undefined>(undefined);
  // The page the grid is loading up to (a far page a link names): its rows are not shown
  // until they are there, so no other page's rows appear under its number.
  const [seeking, setSeeking] = useState<number>();
  useLayoutEffect(() => {
    if (pageInView !== view.page) {
      pending.current = pageStart;
      if (pageStart >= rows.length && !pages.complete) setSeeking(view.page);
    }
  }, [view.page, first]);
  useLayoutEffect(() => {
    const target = pending.current;
    if (target === undefined || !box) return;
    // The rows that fill the box below the page's first row: with fewer, the box cannot scroll
    // that row to its top, and the page in view (and its label) would be an earlier one.
    const below = Math.max(view.pagesize, win.visibleCount);
    if (rows.length >= target + below || pages.complete) {
      pending.current = undefined;
      setSeeking(undefined);
      box.scrollTop = Math.min(target, Math.max(0, rows.length - 1)) * ROW_HEIGHT;
    } else if (!pages.loading && !pages.error) {
      // Up to the page asked for (and what fills the box below it) in one request.
      pages.loadMore(target + below - rows.length);
    }
  }, [box, rows.length, pages.complete, pages.loading, pages.error, view.page]);
  // Scrolling keeps the URL's page up to date (in place: Back leaves the table, not the scroll).
  useEffect(() => {
    if (!trial && pending.current === undefined && rows.length > 0 && pageInView !== view.page)
      onView({ page: pageInView }, true);
  }, [pageInView]);
  // Near the end of what is loaded: the next page.
  useEffect(() => {
    if (win.end + view.pagesize / 2 >= rows.length && pages.next && !pages.loading && !pages.error)
      pages.loadMore();
  }, [win.end, rows.length, pages.next, pages.loading, pages.error]);

  const failure = pages.error instanceof ApiFailure ? pages.error : undefined;
  const place = failure?.errorCode === 4002 ? queryErrorPlace(failure.message) : undefined;
  const errorAt = (name: "filter" | "order") =>
    failure && place && (place.parameter === name || place.parameter === `sys${name}`)
      ? { message: failure.message, place, failure }
      : undefined;

  const lastPage = pages.complete ? Math.max(1, Math.ceil(rows.length / view.pagesize)) : undefined;
  const count = pages.complete ? `${fmt(rows.length)} rows` : `at least ${fmt(rows.length + 1)} rows`;
  const inView =
    rows.length === 0
      ? ""
      : `rows ${fmt(win.firstVisible + 1)}–${fmt(Math.min(rows.length, win.firstVisible + win.visibleCount))} of ${count}`;
  const shown = rows.slice(win.start, win.end);
  const keyColumns = columns.filter((c) => c.key).map((c) => c.name);
  const toggle = (row: Row, on: boolean) =>
    setSelected((old) => {
      const next = new Map(old);
      const href = metadataOf(row).href ?? "";
      if (on) next.set(href, row);
      else next.delete(href);
      return next;
    });
  const allShownSelected = shown.length > 0 && shown.every((r) => selected.has(metadataOf(r).href ?? ""));

  const openCol = writable ? 1 : 0;
  const cellCount = openCol + 1 + columns.length + (hasChildren ? 1 : 0);
  const current = {
    row: Math.min(cursor.row, Math.max(0, rows.length - 1)),
    col: Math.min(cursor.col, cellCount - 1),
  };
  const cellTab = (row: number, col: number) => (row === current.row && col === current.col ? 0 : -1);
  function moveTo(row: number, col: number) {
    const next = {
      row: Math.max(0, Math.min(rows.length - 1, row)),
      col: Math.max(0, Math.min(cellCount - 1, col)),
    };
    moved.current = true;
    setCursor(next);
    if (box) {
      // Into view below the sticky header (one row high).
      const top = next.row * ROW_HEIGHT;
      if (top < box.scrollTop) box.scrollTop = top;
      else if (top + 2 * ROW_HEIGHT > box.scrollTop + box.clientHeight)
        box.scrollTop = top + 2 * ROW_HEIGHT - box.clientHeight;
    }
  }
  function onGridKey(e: KeyboardEvent) {
    const target = e.target as HTMLElement;
    if (target.tagName !== "TD") return;
    const page = Math.max(1, win.visibleCount - 1);
    const keys: Record<string, () => void> = {
      ArrowDown: () => moveTo(current.row + 1, current.col),
      ArrowUp: () => moveTo(current.row - 1, current.col),
      ArrowRight: () => moveTo(current.row, current.col + 1),
      ArrowLeft: () => moveTo(current.row, current.col - 1),
      PageDown: () => moveTo(current.row + page, current.col),
      PageUp: () => moveTo(current.row - page, current.col),
      Home: () => moveTo(e.ctrlKey ? 0 : current.row, 0),
      End: () => moveTo(e.ctrlKey ? rows.length - 1 : current.row, cellCount - 1),
      Enter: () => {
        const row = rows[current.row];
        if (row) props.onOpen(row);
      },
      " ": () => {
        const row = rows[current.row];
        if (row && writable && current.col === 0) toggle(row, !selected.has(metadataOf(row).href ?? ""));
      },
    };
    const action = keys[e.key];
    if (!action) return;
    e.preventDefault();
    action();
  }
  function onHeaderKey(e: KeyboardEvent) {
    if (e.altKey) return;
    const controls = Array.from(
      (e.currentTarget as HTMLElement).querySelectorAll<HTMLElement>("[data-header-stop]"),
    );
    const at = controls.indexOf(e.target as HTMLElement);
    const to: Record<string, number> = {
      ArrowRight: at + 1,
      ArrowLeft: at - 1,
      Home: 0,
      End: controls.length - 1,
    };
    const wanted = to[e.key];
    if (at < 0 || wanted === undefined) return;
    e.preventDefault();
    const next = Math.max(0, Math.min(controls.length - 1, wanted));
    setHeaderStop(next);
    controls[next]?.focus();
  }
  const sortable = columns.filter((c) => c.type !== "json").map((c) => c.name);
  const headerStops = (writable ? 1 : 0) + sortable.length;
  const headerTab = (index: number) => (index === Math.min(headerStop, headerStops - 1) ? 0 : -1);

  // The focus follows the current cell when the keyboard moved it (the row is rendered by then).
  useLayoutEffect(() => {
    if (!moved.current || !box) return;
    moved.current = false;
    box
      .querySelector<HTMLElement>(`tr[aria-rowindex="${current.row + 2}"] > :nth-child(${current.col + 1})`)
      ?.focus({ preventScroll: true });
  });

  return (
    <div class="rows" aria-busy={pages.loading}>
      <QueryBar key={first} query={view} onApply={tryQuery} errorAt={errorAt} />
      <FilterBuilder
        columns={columns}
        onAdd={(condition) => tryQuery({ filter: andCondition(view.filter, condition) })}
      />
      <div class="grid-tools">
        <CsvExport
          client={props.client}
          collectionPath={props.collectionPath}
          filter={view.filter}
          order={view.order}
          fileName={props.name}
        />
        {writable && (
          <CsvImport
            client={props.client}
            collectionPath={props.collectionPath}
            columns={columns.filter((c) => !c.derived)}
            row={view.row}
            onImported={pages.restart}
          />
        )}
        <BulkDelete
          client={props.client}
          collectionPath={props.collectionPath}
          selected={[...selected.values()]}
          keyColumns={keyColumns}
          onClear={() => setSelected(new Map())}
          onDeleted={(o) => {
            setSelected(new Map());
            props.onWritten(o);
          }}
        />
      </div>
      {/* A filter's or order's error is shown at its input instead. Loading more shows below
          the grid: nothing above the rows in view may appear or go while a page loads. */}
      {rows.length === 0 && <LoadStatus what="rows" load={place ? { ...pages, error: undefined } : pages} />}
      {pages.complete && rows.length === 0 && <p class="empty">No rows.</p>}
      {seeking !== undefined && !pages.error && (
        <p class="notice info" role="status">
          Loading page {fmt(seeking)}…
        </p>
      )}
      {rows.length > 0 && (
        <section
          class={`grid-box${seeking !== undefined && !pages.error ? " seeking" : ""}`}
          ref={setBox}
          aria-label={`${props.name} rows`}
          aria-busy={seeking !== undefined}
        >
          <table
            // biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: ARIA's data grid pattern is a table with role grid
            role="grid"
            aria-label={`${props.name}: rows`}
            aria-colcount={cellCount}
            onKeyDown={onGridKey}
            class="grid data virtual"
            style={{ width: `${tableWidth}px` }}
            aria-rowcount={pages.complete ? rows.length + 1 : -1}
          >
            <colgroup>
              {writable && <col style={{ width: `${SELECT_WIDTH}px` }} />}
              <col style={{ width: `${OPEN_WIDTH}px` }} />
              {columns.map((c) => (
                <col key={c.name} style={{ width: `${widthOf(c)}px` }} />
              ))}
              {hasChildren && <col style={{ width: `${CHILDREN_WIDTH}px` }} />}
            </colgroup>
            <thead>
              <tr aria-rowindex={1} onKeyDown={onHeaderKey}>
                {writable && (
                  <th scope="col">
                    <input
                      type="checkbox"
                      data-header-stop
                      tabIndex={headerTab(0)}
                      aria-label="Select the rows shown"
                      checked={allShownSelected}
                      onChange={(e) => {
                        for (const r of shown) toggle(r, e.currentTarget.checked);
                      }}
                    />
                  </th>
                )}
                <th scope="col">
                  <span class="sr-only">Open</span>
                </th>
                {columns.map((c) => (
                  <HeaderCell
                    key={c.name}
                    column={c}
                    sort={sortOf(view.order, c.name)}
                    tabIndex={headerTab((writable ? 1 : 0) + sortable.indexOf(c.name))}
                    onSort={
                      c.type === "json" ? undefined : () => tryQuery({ order: nextOrder(view.order, c.name) })
                    }
                    width={widthOf(c)}
                    onWidth={(w) => setWidths((old) => ({ ...old, [c.name]: w }))}
                  />
                ))}
                {hasChildren && <th scope="col">Children</th>}
              </tr>
            </thead>
            <tbody>
              {win.start > 0 && <tr class="spacer" style={{ height: `${win.start * ROW_HEIGHT}px` }} />}
              {shown.map((row, i) => {
                const index = win.start + i;
                const href = metadataOf(row).href ?? "";
                return (
                  <tr
                    key={href || index}
                    aria-rowindex={index + 2}
                    class={href && href === props.openHref ? "current" : undefined}
                  >
                    {writable && (
                      <td tabIndex={cellTab(index, 0)}>
                        <input
                          type="checkbox"
                          tabIndex={-1}
                          aria-label={`Select row ${index + 1}`}
                          checked={selected.has(href)}
                          onChange={(e) => toggle(row, e.currentTarget.checked)}
                        />
                      </td>
                    )}
                    <td tabIndex={cellTab(index, openCol)}>
                      <button type="button" class="small" tabIndex={-1} onClick={() => props.onOpen(row)}>
                        Open
                      </button>
                    </td>
                    {columns.map((c, ci) => (
                      <GridCell
                        key={c.name}
                        tabIndex={cellTab(index, openCol + 1 + ci)}
                        value={row[c.name]}
                        width={widthOf(c)}
                        label={`${c.name} of row ${index + 1}`}
                        onShowAll={() =>
                          setFull({ title: `${c.name} of row ${index + 1}`, value: row[c.name] })
                        }
                      />
                    ))}
                    {hasChildren && (
                      <td tabIndex={cellTab(index, cellCount - 1)}>
                        <span class="cell">{childCounts(row, children)}</span>
                      </td>
                    )}
                  </tr>
                );
              })}
              {win.end < rows.length && (
                <tr class="spacer" style={{ height: `${(rows.length - win.end) * ROW_HEIGHT}px` }} />
              )}
            </tbody>
          </table>
        </section>
      )}
      <nav class="pager" aria-label="Row pages">
        <button
          type="button"
          disabled={view.page <= 1}
          onClick={() => onView({ page: Math.max(1, view.page - 1) })}
        >
          ← Previous page
        </button>
        <button
          type="button"
          disabled={lastPage !== undefined && view.page >= lastPage}
          onClick={() => onView({ page: view.page + 1 })}
        >
          Next page →
        </button>
        <span class="pager-page" role="status">
          Page {fmt(view.page)}
          {lastPage !== undefined ? ` of ${fmt(lastPage)}` : ""}
        </span>
        <span class="muted grid-count">{inView}</span>
      </nav>
      {rows.length > 0 && <LoadStatus what="more rows" load={pages} />}
      {full && <FullValue title={full.title} value={full.value} onClose={() => setFull(undefined)} />}
    </div>
  );
}
