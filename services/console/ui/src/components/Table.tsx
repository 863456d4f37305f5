/** A table of rows: a header per column, each cell drawn by its column, and optional row actions. */
import type { ComponentChildren } from "preact";
import { ScrollArea } from "./ScrollArea.tsx";

export interface Column<T> {
  title: string;
  cell: (row: T) => ComponentChildren;
  class?: string;
}

export function Table<T>(props: {
  /** What the rows are: names the table's scrolling region on a narrow screen. */
  label: string;
  rows: T[];
  columns: Column<T>[];
  rowKey: (row: T, index: number) => string | number;
  /** The row's buttons (only the actions the caller may take). */
  actions?: (row: T) => ComponentChildren;
  rowClass?: (row: T) => string | undefined;
  class?: string;
}) {
  return (
    <ScrollArea label={props.label}>
      <table class={`grid ${props.class ?? ""}`}>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th scope="col" key={c.title}>
                {c.title}
              </th>
            ))}
            {props.actions && (
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row, i) => (
            <tr key={props.rowKey(row, i)} class={props.rowClass?.(row)}>
              {props.columns.map((c) => (
                <td key={c.title} class={c.class}>
                  {c.cell(row)}
                </td>
              ))}
              {props.actions && <td class="row-actions">{props.actions(row)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollArea>
  );
}

/** A row's destructive action: the visible word, and the row's name for assistive technology. */
export function RowAction(props: { label: string; name: string; onClick: () => void }) {
  return (
    <button type="button" class="danger" onClick={props.onClick}>
      {props.label}
      <span class="sr-only">
        {" "}
        <bdi>{props.name}</bdi>
      </span>
    </button>
  );
}
