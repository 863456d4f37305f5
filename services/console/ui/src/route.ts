/**
 * Where the console is: the part of the URL after `#`, as decoded path segments and,
 * after a `?`, query parameters (`#/explorer/customer?filter=…&page=3`). Back, reload
 * and a shared link all come back to the same place.
 */
import { useEffect, useState } from "preact/hooks";

/** Fired when the route is replaced in place (no history entry, so no `hashchange`). */
const REPLACED = "tessera:route-replaced";

function parts(): [string, string] {
  const hash = window.location.hash.replace(/^#\/?/, "");
  const at = hash.indexOf("?");
  return at < 0 ? [hash, ""] : [hash.slice(0, at), hash.slice(at + 1)];
}

function current(): string[] {
  return parts()[0]
    .split("/")
    .filter(Boolean)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

function useHash<T>(read: () => T): T {
  const [value, setValue] = useState(read);
  useEffect(() => {
    const changed = () => setValue(read());
    window.addEventListener("hashchange", changed);
    window.addEventListener(REPLACED, changed);
    return () => {
      window.removeEventListener("hashchange", changed);
      window.removeEventListener(REPLACED, changed);
    };
  }, []);
  return value;
}

/** The route and its query as they are now (not as a render saw them). */
export function currentRoute(): [string[], string] {
  return [current(), parts()[1]];
}

export function useRoute(): string[] {
  return useHash(current);
}

/** The route's query parameters (after `?` in the hash), as text. */
export function useRouteQuery(): string {
  return useHash(() => parts()[1]);
}

/** The href of a route (each segment encoded), with query parameters when given. */
export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join("/")}`;
}

/** The href of a route with query parameters (empty ones left out). */
export function hrefWith(segments: string[], params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
  const text = query.toString();
  return `${href(...segments)}${text ? `?${text}` : ""}`;
}

export function go(...segments: string[]): void {
  window.location.hash = href(...segments).slice(1);
}

/**
 * Goes to a route with query parameters: a new history entry (Back returns), or with
 * `replace`, the current entry changed in place (a scroll position, say).
 */
export function goWith(
  segments: string[],
  params: Record<string, string | undefined>,
  options: { replace?: boolean } = {},
): void {
  const target = hrefWith(segments, params);
  if (target === window.location.hash) return;
  if (options.replace) {
    window.history.replaceState(window.history.state, "", target);
    window.dispatchEvent(new Event(REPLACED));
  } else {
    window.location.hash = target.slice(1);
  }
}
