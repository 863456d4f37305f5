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
  const measure = () => {
    const area = ref.current;
    if (area) setScrolls(area.scrollWidth > area.clientWidth || area.scrollHeight > area.clientHeight);
  };
  // After every render (new content from the parent is measured before the browser paints it)…
  useLayoutEffect(measure);
  // …and whenever the box or what is in it changes size, or content arrives by itself.
  useLayoutEffect(() => {
    const area = ref.current;
    if (!area) return;
    const observer = new ResizeObserver(measure);
    const observeAll = () => {
      observer.observe(area);
      for (const child of area.children) observer.observe(child);
    };
    observeAll();
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
