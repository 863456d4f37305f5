/**
 * One attribute's editor, chosen by its column type: a choice for booleans, a date or a
 * UTC date-time picker, a number input, a text area for JSON and long text, a line for
 * the rest. "null" sets the value to null (any attribute that is not required); a
 * read-only attribute (the key, a rule's result) shows its value and why it cannot change.
 */
import type { ColumnInfo } from "./columns.ts";
import type { Draft } from "./typed-values.ts";

const LONG_TEXT = 80;

function Input(props: { id: string; type: string; draft: Draft; hint: string; onText: (t: string) => void }) {
  const { id, type, draft } = props;
  const common = {
    id,
    disabled: draft.isNull,
    "aria-describedby": props.hint,
    onInput: (e: Event) => props.onText((e.target as HTMLInputElement).value),
  };
  if (type === "boolean")
    return (
      <select {...common} value={draft.isNull ? "" : draft.text} onChange={common.onInput}>
        {(draft.isNull || draft.text === "") && <option value="">(none)</option>}
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  if (type === "json" || draft.text.length > LONG_TEXT || draft.text.includes("\n"))
    return (
      <textarea
        {...common}
        class={type === "json" ? "code" : undefined}
        rows={Math.min(8, Math.max(3, draft.text.split("\n").length))}
        value={draft.text}
      />
    );
  if (type === "date") return <input {...common} type="date" value={draft.text} />;
  if (type === "datetime") return <input {...common} type="datetime-local" step={1} value={draft.text} />;
  if (type === "number" || type === "integer")
    return (
      <input
        {...common}
        type="number"
        step={type === "integer" ? 1 : "any"}
        inputMode={type === "integer" ? "numeric" : "decimal"}
        value={draft.text}
      />
    );
  return <input {...common} value={draft.text} />;
}

export function AttributeEditor(props: {
  id: string;
  column: ColumnInfo;
  draft: Draft;
  onChange: (draft: Draft) => void;
  /** Why it cannot be edited here, if it cannot. */
  readOnly?: string | undefined;
  /** For a new row: what happens when it is left empty. */
  note?: string | undefined;
  error?: string | undefined;
}) {
  const { id, column, draft } = props;
  const hint = `${id}-hint`;
  const label = column.type === "datetime" ? `${column.name} (UTC)` : column.name;
  const about = [column.type, column.required ? "required" : "", props.readOnly ?? props.note ?? ""]
    .filter(Boolean)
    .join(", ");
  return (
    <div class={`field attribute ${props.error ? "invalid" : ""}`}>
      <label for={id}>{label}</label>
      {props.readOnly ? (
        <input id={id} readOnly value={draft.isNull ? "null" : draft.text} aria-describedby={hint} />
      ) : (
        <div class="attribute-input">
          <Input
            id={id}
            type={column.type}
            draft={draft}
            hint={hint}
            onText={(text) => props.onChange({ text, isNull: false })}
          />
          {!column.required && (
            <label class="null-toggle">
              <input
                type="checkbox"
                aria-label={`null (${column.name})`}
                checked={draft.isNull}
                onChange={(e) =>
                  props.onChange({ text: draft.text, isNull: (e.target as HTMLInputElement).checked })
                }
              />
              null
            </label>
          )}
        </div>
      )}
      <small id={hint} class="hint">
        {about}
      </small>
      {props.error && (
        <p class="field-error" role="alert">
          {column.name} {props.error}
        </p>
      )}
    </div>
  );
}
