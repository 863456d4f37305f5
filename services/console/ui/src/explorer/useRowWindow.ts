/**
 * Which rows of a long list to put in the DOM: those in the scrolled box's view, and a
 * few around them. Every row has the same height (a cell shows one line; its full value
 * is on demand), so where a row lies is index × height, with nothing to measure — which
 * is why this is a few lines here rather than a virtualization library.
 */
import { useLayoutEffect, useState } from "preact/hooks";

export interface RowWindow {
  /** First row in the DOM. */
  start: number;
  /** One past the last row in the DOM. */
  end: number;
  /** First row in view. */
  firstVisible: number;
  /** Rows that fit in the view. */
  visibleCount: number;
}

export function useRowWindow(
  el: HTMLElement | null,
  count: number,
  rowHeight: number,
  overscan = 20,
): RowWindow {
  const [view, setView] = useState({ top: 0, height: 600 });
  useLayoutEffect(() => {
    if (!el) return;
    // Quantized to whole rows: scrolling inside a row re-renders nothing.
    const measure = () =>
      setView((v) => {
        const top = Math.floor(el.scrollTop / rowHeight);
        const height = el.clientHeight;
        return v.top === top && v.height === height ? v : { top, height };
      });
    measure();
    el.addEventListener("scroll", measure, { passive: true });
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => {
      el.removeEventListener("scroll", measure);
      observer.disconnect();
    };
  }, [el, rowHeight]);
  const visibleCount = Math.max(1, Math.ceil(view.height / rowHeight));
  const firstVisible = Math.min(view.top, Math.max(0, count - 1));
  return {
    start: Math.max(0, firstVisible - overscan),
    end: Math.min(count, firstVisible + visibleCount + overscan),
    firstVisible,
    visibleCount,
  };
}
