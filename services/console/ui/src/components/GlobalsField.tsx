/** The globals of a user or a key, typed as a JSON object (read with parseGlobals). */
import { Field } from "./Field.tsx";

export function GlobalsField(props: { name: string; value: string; onInput: (value: string) => void }) {
  return (
    <Field
      label="Globals (JSON object)"
      name={props.name}
      value={props.value}
      onInput={props.onInput}
      multiline
      hint={`Values for @{name} in role row filters, e.g. {"region": "north"}. Empty: none.`}
    />
  );
}
