/**
 * Pages through a paged answer by its `next_batch` links, remembering the way back. A page
 * that is no longer wanted (another page, other filters, the screen left) is aborted, and
 * its answer, should it come anyway, dropped.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import { type Client, pageOf } from "../api.ts";

export interface Paged<T> {
  items: T[] | undefined;
  error: unknown;
  /** A page is on its way. */
  loading: boolean;
  next: string | undefined;
  /** Which page this is, from 1. */
  page: number;
  hasPrevious: boolean;
  goNext: () => void;
  goPrevious: () => void;
  reload: () => void;
}

export function usePaged<T>(client: Client, first: string | undefined): Paged<T> {
  const [trail, setTrail] = useState<string[]>(first ? [first] : []);
  const [items, setItems] = useState<T[]>();
  const [next, setNext] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    setTrail(first ? [first] : []);
  }, [first]);

  const path = trail.at(-1);
  useEffect(() => {
    if (!path) return;
    let stale = false;
    const call = new AbortController();
    setLoading(true);
    client.call("GET", path, { signal: call.signal }).then(
      (r) => {
        if (stale) return;
        const page = pageOf<T>(r.body);
        setItems(page.items);
        setNext(page.next);
        setError(undefined);
        setLoading(false);
      },
      (err) => {
        if (stale) return;
        setItems(undefined);
        setNext(undefined);
        setError(err);
        setLoading(false);
      },
    );
    return () => {
      stale = true;
      call.abort();
    };
  }, [client, path, generation]);

  return {
    items,
    error,
    loading,
    next,
    page: trail.length,
    hasPrevious: trail.length > 1,
    goNext: useCallback(() => next && setTrail((t) => [...t, next]), [next]),
    goPrevious: useCallback(() => setTrail((t) => (t.length > 1 ? t.slice(0, -1) : t)), []),
    reload: useCallback(() => setGeneration((g) => g + 1), []),
  };
}
