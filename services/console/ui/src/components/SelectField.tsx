/** A labelled choice among options (a filter, a role). */
import { useId } from "preact/hooks";

export interface Option {
  value: string;
  label: string;
}

export function SelectField(props: {
  label: string;
  value: string;
  options: Option[];
  onChange: (value: string) => void;
  id?: string;
}) {
  const generated = useId();
  const id = props.id ?? generated;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Whose changes a listing shows: everyone's, the operator's, or one administrator's (`by=`). */
export function whoOptions(logins: string[]): Option[] {
  return [
    { value: "", label: "Everyone" },
    { value: "operator", label: "The operator" },
    ...logins.map((login) => ({ value: `admin:${login}`, label: login })),
  ];
}

export const ORDER_OPTIONS: Option[] = [
  { value: "newest", label: "Newest first" },
  { value: "oldest", label: "Oldest first" },
];
