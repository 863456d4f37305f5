/**
 * Loads something when the inputs change; answers it with the error and a reload function.
 *
 * What was loaded for other inputs is never shown for these: when the inputs change, the
 * value is cleared before the browser paints (a layout effect), the load under way is
 * aborted (its `signal`), and an answer that arrives after a newer load started (the user
 * went on to another project, say) is dropped. A reload for the same inputs keeps the
 * value on screen until the new one arrives. Leaving the screen aborts the load too.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";

export interface Loaded<T> {
  value: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

interface LoadState<T> {
  value: T | undefined;
  error: unknown;
  loading: boolean;
}

const LOADING = { value: undefined, error: undefined, loading: true };

export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, inputs: unknown[]): Loaded<T> {
  const [state, setState] = useState<LoadState<T>>(LOADING);
  const latest = useRef<AbortController | undefined>(undefined);
  const reload = useCallback(async () => {
    latest.current?.abort();
    const call = new AbortController();
    latest.current = call;
    setState((s) => ({ ...s, loading: true }));
    try {
      const value = await load(call.signal);
      if (call === latest.current) setState({ value, error: undefined, loading: false });
    } catch (err) {
      if (call === latest.current && !call.signal.aborted)
        setState((s) => ({ ...s, error: err, loading: false }));
    }
  }, inputs);
  useLayoutEffect(() => {
    setState(LOADING);
  }, inputs);
  useEffect(() => {
    void reload();
  }, [reload]);
  useEffect(() => () => latest.current?.abort(), []);
  return { ...state, reload };
}
