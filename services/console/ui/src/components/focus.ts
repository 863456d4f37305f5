/**
 * Moves keyboard focus to an element whenever `trigger` changes to something truthy.
 * A layout effect: focus moves in the same task that puts the element in the page, so
 * nobody (a screen reader, a keystroke, a test) ever sees the element without focus.
 */
import type { RefObject } from "preact";
import { useLayoutEffect } from "preact/hooks";

export function useFocusOn(ref: RefObject<HTMLElement | null>, trigger: unknown): void {
  useLayoutEffect(() => {
    if (trigger) ref.current?.focus();
  }, [trigger]);
}
