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
    observer.observe(area);
    for (const child of area.children) observer.observe(child);
    return () => observer.disconnect();
  }, []);
  const region = { tabIndex: 0, role: "region" as const, "aria-label": props.label };
  return (
    <div ref={ref} class={`scroll ${props.class ?? ""}`} {...(scrolls ? region : {})}>
      {props.children}
    </div>
  );
}
