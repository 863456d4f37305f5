/**
 * One value in the grid: one line, cut with an ellipsis where the column ends (words are
 * never broken); a value too long for its column has a button that shows all of it.
 */
import { Value, valueText } from "../components/Value.tsx";

/** An average character's width, to tell (without measuring) whether a value fits. */
const CHAR_WIDTH = 7.5;
const PADDING = 24;

export function GridCell(props: {
  value: unknown;
  width: number;
  /** Names what is shown in full: `notes of row 3`. */
  label: string;
  onShowAll: () => void;
  /** 0 for the grid's current cell, else -1 (one Tab stop for the whole grid). */
  tabIndex: number;
}) {
  const text = valueText(props.value);
  const cut = text.length * CHAR_WIDTH > props.width - PADDING || /[\r\n]/.test(text);
  return (
    <td class={cut ? "cut" : undefined} tabIndex={props.tabIndex}>
      <span class="cell">
        <Value value={props.value} />
      </span>
      {cut && (
        <button
          type="button"
          class="cell-more"
          aria-label={`All of ${props.label}`}
          tabIndex={-1}
          onClick={props.onShowAll}
        >
          …
        </button>
      )}
    </td>
  );
}
