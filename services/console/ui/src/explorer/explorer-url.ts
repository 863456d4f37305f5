/**
 * What the explorer shows, as it is kept in the URL (`#/explorer/<table>?filter=…&order=…
 * &pagesize=…&page=…&row=…`): the table or resource, its query, the page scrolled to and
 * the open row (its path under the version, `customer/A4`). Back, reload and a shared link
 * show the same thing.
 */
export interface ExplorerView {
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
  return {
    table: segments[1],
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
    view.table === undefined ? ["explorer"] : ["explorer", view.table],
    {
      filter: view.filter.trim() ? view.filter : undefined,
      order: view.order.trim() ? view.order : undefined,
      pagesize: view.pagesize !== DEFAULT_PAGESIZE ? String(view.pagesize) : undefined,
      page: view.page > 1 ? String(view.page) : undefined,
      row: view.row,
    },
  ];
}

/** Another table: nothing of the old one's query, page or row comes along. */
export function viewOfTable(table: string): ExplorerView {
  return { table, filter: "", order: "", pagesize: DEFAULT_PAGESIZE, page: 1, row: undefined };
}
