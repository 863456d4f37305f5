/**
 * What the explorer shows, as it is kept in the URL (`#/explorer/<account>/<project>/<version>
 * /<table>?filter=…&order=…&pagesize=…&page=…&row=…`): the project version, the table or
 * resource, its query, the page scrolled to and the open row (its path under the version,
 * `customer/A4`). Back, reload and a link opened in another tab (after signing in there)
 * show the same thing. `#/explorer/<table>` (no project) is read as a table of the project
 * open in the tab.
 */
import type { ExplorerTarget } from "../session.ts";

export interface ExplorerView {
  /** The project version: undefined in `#/explorer` and `#/explorer/<table>`. */
  place: ExplorerTarget | undefined;
  table: string | undefined;
  filter: string;
  order: string;
  pagesize: number;
  /** From 1. */
  page: number;
  row: string | undefined;
}

export const DEFAULT_PAGESIZE = 100;
export const MAX_PAGESIZE = 5000;

function whole(text: string | null, fallback: number, max: number): number {
  const n = Number(text);
  return Number.isSafeInteger(n) && n >= 1 ? Math.min(n, max) : fallback;
}

export function parseView(segments: string[], query: string): ExplorerView {
  const params = new URLSearchParams(query);
  const [, account, project, version, table] = segments;
  const place = account && project && version ? { account, project, version } : undefined;
  return {
    place,
    table: place ? table : segments[1],
    filter: params.get("filter") ?? "",
    order: params.get("order") ?? "",
    pagesize: whole(params.get("pagesize"), DEFAULT_PAGESIZE, MAX_PAGESIZE),
    page: whole(params.get("page"), 1, Number.MAX_SAFE_INTEGER),
    row: params.get("row") || undefined,
  };
}

/** The route segments and parameters of a view (defaults left out, so links stay short). */
export function viewRoute(view: ExplorerView): [string[], Record<string, string | undefined>] {
  return [
    [
      "explorer",
      ...(view.place ? [view.place.account, view.place.project, view.place.version] : []),
      ...(view.table === undefined ? [] : [view.table]),
    ],
    {
      filter: view.filter.trim() ? view.filter : undefined,
      order: view.order.trim() ? view.order : undefined,
      pagesize: view.pagesize !== DEFAULT_PAGESIZE ? String(view.pagesize) : undefined,
      page: view.page > 1 ? String(view.page) : undefined,
      row: view.row,
    },
  ];
}

export const samePlace = (a: ExplorerTarget | undefined, b: ExplorerTarget | undefined) =>
  a !== undefined &&
  b !== undefined &&
  a.account === b.account &&
  a.project === b.project &&
  a.version === b.version;

/** Another table: nothing of the old one's query, page or row comes along. */
export function viewOfTable(place: ExplorerTarget | undefined, table: string | undefined): ExplorerView {
  return { place, table, filter: "", order: "", pagesize: DEFAULT_PAGESIZE, page: 1, row: undefined };
}
