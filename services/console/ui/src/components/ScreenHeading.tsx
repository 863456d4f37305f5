/**
 * A screen's main heading. It names the screen in the tab's title, and takes the focus
 * when the screen opens (or the title changes: another project, another tab), so that
 * keyboard and screen-reader users start at the top of what they asked for instead of
 * on a link that is gone or on the page's body.
 */
import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";

export function ScreenHeading(props: { id?: string; title: string; children?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => {
    document.title = `${props.title} · Tessera console`;
    ref.current?.focus();
  }, [props.title]);
  return (
    <h1 id={props.id} ref={ref} tabIndex={-1}>
      {props.children ?? props.title}
    </h1>
  );
}
