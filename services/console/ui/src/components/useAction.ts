/** Runs a change: remembers its error or its success message (each takes the focus when shown). */
import { useState } from "preact/hooks";

export function useAction() {
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);
  async function run(action: () => Promise<string | undefined>): Promise<boolean> {
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      setDone(await action());
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }
  return { error, done, busy, run };
}

export type Action = ReturnType<typeof useAction>;
