/**
 * Rows of a query, page after page: the first page, then each `next_batch` as it is
 * asked for (the grid asks as the user scrolls towards the end). Rows already loaded stay
 * in place, so loading more never moves what is on screen. Another query starts over;
 * an answer for an older query is dropped.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, type Client, pageOf } from "../api.ts";
import type { Row } from "./rows.ts";

/**
 * A `next_batch` path asking for another number of rows: where the page starts (its
 * `offset` or `pagekey`) does not depend on the page size, only where it ends.
 */
function withPagesize(path: string, rows: number): string {
  const url = new URL(path, window.location.origin);
  const now = Number(url.searchParams.get("pagesize") ?? "20");
  url.searchParams.set("pagesize", String(Math.max(now, Math.min(CATCH_UP_ROWS, rows))));
  return url.pathname + url.search;
}

/**
 * The most rows asked for in one request on the way to a far page: enough to get there in
 * few requests, few enough to stay well within the server's query time limit (503/5031).
 */
const CATCH_UP_ROWS = 1000;

/** How long a page read that met 503 (or no answer) waits before its one more try. */
const RETRY_AFTER_MS = 1000;

export interface RowPages {
  /** The query these rows are of (its first page's path): another one's until its rows arrive. */
  first: string | undefined;
  rows: Row[];
  /** The next page's path; undefined once every row is loaded. */
  next: string | undefined;
  /** Every row of the query is loaded. */
  complete: boolean;
  loading: boolean;
  error: unknown;
  /**
   * Loads the next page (nothing while one loads, after a failure, or when complete); with
   * `atLeast`, that many rows in one request (up to CATCH_UP_ROWS) — to reach a far page
   * in few requests.
   */
  loadMore: (atLeast?: number) => void;
  /** After a failure: the page that failed, again. */
  reload: () => void;
  /** Starts over from the first page (after a write). */
  restart: () => void;
}

interface State {
  first: string | undefined;
  rows: Row[];
  next: string | undefined;
  complete: boolean;
  error: unknown;
  loading: boolean;
}

const START: State = {
  first: undefined,
  rows: [],
  next: undefined,
  complete: false,
  error: undefined,
  loading: true,
};

export function useRowPages(client: Client, first: string): RowPages {
  const [state, setState] = useState<State>(START);
  const generation = useRef(0);
  const busy = useRef(false);

  const fetchPage = useCallback(
    (path: string, replace: boolean) => {
      const mine = generation.current;
      busy.current = true;
      setState((s) => ({ ...s, loading: true, error: undefined }));
      const attempt = (againAfterUnavailable: boolean) =>
        client.call("GET", path).then(
          (r) => {
            if (mine !== generation.current) return;
            busy.current = false;
            const page = pageOf<Row>(r.body);
            setState((s) => ({
              first,
              rows: replace ? page.items : [...s.rows, ...page.items],
              next: page.next,
              complete: !page.next,
              error: undefined,
              loading: false,
            }));
          },
          (err) => {
            if (mine !== generation.current) return;
            // A read changes nothing: one that met a busy or unreachable service is tried once more.
            if (
              againAfterUnavailable &&
              err instanceof ApiFailure &&
              (err.status === 503 || err.status === 0)
            ) {
              setTimeout(() => attempt(false), RETRY_AFTER_MS);
              return;
            }
            busy.current = false;
            setState((s) => ({ ...s, error: err, loading: false }));
          },
        );
      void attempt(true);
    },
    [client, first],
  );

  const restart = useCallback(() => {
    generation.current++;
    fetchPage(first, true);
  }, [first, fetchPage]);

  // Another query: nothing of the old one is shown, not even for one frame.
  useLayoutEffect(() => {
    setState(START);
  }, [first]);
  useEffect(restart, [restart]);

  const loadMore = useCallback(
    (atLeast?: number) => {
      if (busy.current || state.error || !state.next) return;
      fetchPage(atLeast ? withPagesize(state.next, atLeast) : state.next, false);
    },
    [state.next, state.error, fetchPage],
  );

  const reload = useCallback(() => {
    if (busy.current) return;
    if (state.rows.length === 0) restart();
    else if (state.next) fetchPage(state.next, false);
  }, [state.rows.length, state.next, restart, fetchPage]);

  return { ...state, loadMore, reload, restart };
}
