/** Loads something when the inputs change; answers it with the error and a reload function. */
import { useCallback, useEffect, useState } from "preact/hooks";

export interface Loaded<T> {
  value: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

export function useLoad<T>(load: () => Promise<T>, inputs: unknown[]): Loaded<T> {
  const [value, setValue] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const reload = useCallback(async () => {
    setLoading(true);
    try {
      setValue(await load());
      setError(undefined);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  }, inputs);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { value, error, loading, reload };
}
