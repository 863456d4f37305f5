/** Pages through a paged answer by its `next_batch` links, remembering the way back. */
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
    setLoading(true);
    client.call("GET", path).then(
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
