/** A labelled input: the label names the input for assistive technology. */
import { useId } from "preact/hooks";
import { type NameKind, nameProblem } from "../../../../../shared/names.ts";

export interface FieldProps {
  label: string;
  value: string;
  onInput: (value: string) => void;
  name?: string;
  type?: "text" | "password" | "datetime-local" | "number";
  /** Several lines of text (a JSON object, say), in monospace. */
  multiline?: boolean;
  min?: number;
  max?: number;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** A name of this kind: the form does not submit while it breaks the name grammar (shared/names.ts). */
  nameKind?: NameKind;
}

export function Field(props: FieldProps) {
  const id = useId();
  const describedBy = props.hint ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.multiline ? (
        <textarea
          id={id}
          name={props.name}
          class="code"
          rows={3}
          value={props.value}
          required={props.required}
          spellcheck={false}
          aria-describedby={describedBy}
          onInput={(e) => props.onInput((e.target as HTMLTextAreaElement).value)}
        />
      ) : (
        <input
          id={id}
          name={props.name}
          // Preact's types tie each input type to its own attributes; these share the ones used here.
          type={(props.type ?? "text") as "text"}
          value={props.value}
          required={props.required}
          autocomplete={props.autocomplete}
          minLength={props.minLength}
          maxLength={props.maxLength}
          pattern={props.pattern}
          min={props.min}
          max={props.max}
          aria-describedby={describedBy}
          onInput={(e) => {
            const input = e.target as HTMLInputElement;
            const problem = props.nameKind && nameProblem(props.nameKind, input.value);
            input.setCustomValidity(problem ? `${props.label} ${problem}` : "");
            props.onInput(input.value);
          }}
        />
      )}
      {props.hint && (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      )}
    </div>
  );
}
