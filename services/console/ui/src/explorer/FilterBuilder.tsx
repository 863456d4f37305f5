/**
 * Builds a condition from a column, an operator and a value, and adds it to the filter
 * (ANDed), written in the filter language — so the Filter input shows what was built and
 * can be edited further.
 */
import { useState } from "preact/hooks";
import type { ColumnInfo } from "./columns.ts";
import { conditionText, type Operator, operatorsFor, takesValue } from "./filter-text.ts";

export function FilterBuilder(props: { columns: ColumnInfo[]; onAdd: (condition: string) => void }) {
  const [name, setName] = useState(props.columns[0]?.name ?? "");
  const column = props.columns.find((c) => c.name === name) ?? props.columns[0];
  const operators = column ? operatorsFor(column.type) : [];
  const [chosen, setOperator] = useState<Operator>("=");
  const operator = operators.includes(chosen) ? chosen : (operators[0] ?? "is null");
  const [value, setValue] = useState("");
  if (!column) return null;
  const inputType =
    column.type === "date"
      ? "date"
      : column.type === "number" || column.type === "integer"
        ? "number"
        : "text";
  return (
    <details class="filter-builder">
      <summary>Build a condition</summary>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          props.onAdd(conditionText(column.name, column.type, operator, value));
          setValue("");
        }}
      >
        <div class="field">
          <label for="builder-column">Column</label>
          <select id="builder-column" value={column.name} onChange={(e) => setName(e.currentTarget.value)}>
            {props.columns.map((c) => (
              <option key={c.name} value={c.name}>
                {c.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="builder-operator">Operator</label>
          <select
            id="builder-operator"
            value={operator}
            onChange={(e) => setOperator(e.currentTarget.value as Operator)}
          >
            {operators.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </div>
        {takesValue(operator) &&
          (column.type === "boolean" ? (
            <div class="field">
              <label for="builder-value">Value</label>
              <select id="builder-value" value={value} onChange={(e) => setValue(e.currentTarget.value)}>
                <option value="">(choose)</option>
                <option value="true">true</option>
                <option value="false">false</option>
              </select>
            </div>
          ) : (
            <div class="field grow">
              <label for="builder-value">Value</label>
              <input
                id="builder-value"
                // Preact's types tie each input type to its own attributes; these share the ones used here.
                type={inputType as "text"}
                step={inputType === "number" ? "any" : undefined}
                value={value}
                placeholder={operator.includes("like") ? "A% (% any text, _ one character)" : undefined}
                onInput={(e) => setValue(e.currentTarget.value)}
              />
            </div>
          ))}
        <button type="submit">Add to the filter</button>
      </form>
    </details>
  );
}
