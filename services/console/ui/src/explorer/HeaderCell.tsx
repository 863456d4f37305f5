/**
 * A column's header in the grid: its name sorts by it (ascending, descending, the default
 * order again; `aria-sort` says which), and its right edge resizes it — dragged with the
 * pointer, or focused and moved with the arrow keys (a vertical separator with a value).
 */
import type { ColumnInfo } from "./columns.ts";

export const MIN_WIDTH = 60;
export const MAX_WIDTH = 800;
const STEP = 20;

export function defaultWidth(type: string): number {
  if (type === "boolean") return 100;
  if (type === "number" || type === "integer") return 120;
  if (type === "date") return 130;
  if (type === "datetime") return 210;
  if (type === "json") return 240;
  return 180;
}

const clamp = (w: number) => Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, Math.round(w)));

function ResizeHandle(props: { name: string; width: number; onWidth: (w: number) => void }) {
  const { width, onWidth } = props;
  return (
    // biome-ignore lint/a11y/useSemanticElements: a focusable splitter (a widget with a value), which <hr> cannot be
    <span
      class="resize"
      role="separator"
      aria-orientation="vertical"
      aria-label={`Width of ${props.name}`}
      aria-valuenow={width}
      aria-valuemin={MIN_WIDTH}
      aria-valuemax={MAX_WIDTH}
      // Out of the Tab order (the header's one stop is its sort buttons): Alt+←/→ on a column's
      // sort button resizes it; the pointer, or arrows once focused, resize here.
      tabIndex={-1}
      onKeyDown={(e) => {
        const by = e.key === "ArrowRight" ? STEP : e.key === "ArrowLeft" ? -STEP : 0;
        if (!by) return;
        e.preventDefault();
        onWidth(clamp(width + by));
      }}
      onPointerDown={(e) => {
        const handle = e.currentTarget as HTMLElement;
        const from = e.clientX;
        handle.setPointerCapture(e.pointerId);
        const move = (m: PointerEvent) => onWidth(clamp(width + m.clientX - from));
        const up = () => {
          handle.removeEventListener("pointermove", move);
          handle.removeEventListener("pointerup", up);
        };
        handle.addEventListener("pointermove", move);
        handle.addEventListener("pointerup", up);
        e.preventDefault();
      }}
    />
  );
}

export function HeaderCell(props: {
  column: ColumnInfo;
  sort: "ascending" | "descending" | undefined;
  onSort: (() => void) | undefined;
  /** The sort button's place in the header's one Tab stop (0: the stop, -1: reached by arrows). */
  tabIndex: number;
  width: number;
  onWidth: (w: number) => void;
}) {
  const { column, sort, width, onWidth } = props;
  const mark = sort === "ascending" ? "▲" : sort === "descending" ? "▼" : "";
  return (
    <th scope="col" aria-sort={sort}>
      <span class="th-inner">
        {props.onSort ? (
          <button
            type="button"
            class="sort"
            data-header-stop
            tabIndex={props.tabIndex}
            aria-keyshortcuts="Alt+ArrowLeft Alt+ArrowRight"
            onClick={props.onSort}
            onKeyDown={(e) => {
              const by = !e.altKey ? 0 : e.key === "ArrowRight" ? STEP : e.key === "ArrowLeft" ? -STEP : 0;
              if (!by) return;
              e.preventDefault();
              e.stopPropagation();
              onWidth(clamp(width + by));
            }}
          >
            <bdi>{column.name}</bdi>
            {mark && <span aria-hidden="true"> {mark}</span>}
          </button>
        ) : (
          <bdi class="th-name">{column.name}</bdi>
        )}
        <ResizeHandle name={column.name} width={props.width} onWidth={props.onWidth} />
      </span>
    </th>
  );
}
