/**
 * Something that may be wider (or taller) than the screen — a table on a phone — and
 * scrolls inside its own box instead of widening the page. While it does scroll, it is
 * a named region in the tab order, so that the keyboard can scroll it too.
 */
import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef, useState } from "preact/hooks";

export function ScrollArea(props: { label: string; class?: string; children: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useLayoutEffect(() => {
    const area = ref.current!;
    const measure = () =>
      setScrolls(area.scrollWidth > area.clientWidth || area.scrollHeight > area.clientHeight);
    const observer = new ResizeObserver(measure);
    const observeAll = () => {
      observer.observe(area);
      for (const child of area.children) observer.observe(child);
    };
    observeAll();
    // Content that arrives later (a table replacing its loading text) is measured too.
    const changes = new MutationObserver(() => {
      observeAll();
      measure();
    });
    changes.observe(area, { childList: true, subtree: true });
    return () => {
      observer.disconnect();
      changes.disconnect();
    };
  }, []);
  const region = { tabIndex: 0, role: "region" as const, "aria-label": props.label };
  return (
    <div ref={ref} class={`scroll ${props.class ?? ""}`} {...(scrolls ? region : {})}>
      {props.children}
    </div>
  );
}
