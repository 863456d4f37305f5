/** Runs `onExpired` when a key's expiration passes (a key without one never expires). */
import { useEffect, useState } from "preact/hooks";
import { expirationTime } from "./api.ts";

const LONGEST_TIMER_MS = 2 ** 31 - 1;

export function useExpiry(expiration: string | null | undefined, onExpired: () => void): void {
  useEffect(() => {
    const at = expirationTime(expiration);
    if (at === undefined) return;
    let timer: ReturnType<typeof setTimeout>;
    const arm = () => {
      const left = at - Date.now();
      if (left <= 0) onExpired();
      else timer = setTimeout(arm, Math.min(left, LONGEST_TIMER_MS));
    };
    arm();
    return () => clearTimeout(timer);
  }, [expiration]);
}

/**
 * Whether a key expires within `leadMs` (true from then on, until the expiration changes:
 * a new key). The warning that lets the user sign in again before anything is lost.
 */
export function useExpiresSoon(expiration: string | null | undefined, leadMs: number): boolean {
  const [soon, setSoon] = useState(false);
  useEffect(() => setSoon(false), [expiration]);
  const at = expirationTime(expiration);
  useExpiry(at === undefined ? undefined : new Date(at - leadMs).toISOString(), () => setSoon(true));
  return soon;
}
