/** Checkboxes for a list of names (a project's roles, tables, verbs). */
export function Checkboxes<N extends string>(props: {
  legend: string;
  names: readonly N[];
  chosen: N[];
  onChange: (chosen: N[]) => void;
  /** Shown when there are no names. */
  empty?: string;
}) {
  return (
    <fieldset class="roles">
      <legend>{props.legend}</legend>
      {props.names.length === 0 && props.empty && <p class="hint">{props.empty}</p>}
      {props.names.map((name) => (
        <label key={name} class="check">
          <input
            type="checkbox"
            checked={props.chosen.includes(name)}
            onChange={(e) =>
              props.onChange(
                (e.target as HTMLInputElement).checked
                  ? [...props.chosen, name]
                  : props.chosen.filter((r) => r !== name),
              )
            }
          />{" "}
          {name}
        </label>
      ))}
    </fieldset>
  );
}

/** Checkboxes for a project's roles. */
export function RolePicker(props: {
  roles: string[];
  chosen: string[];
  onChange: (roles: string[]) => void;
}) {
  return (
    <Checkboxes
      legend="Roles"
      names={props.roles}
      chosen={props.chosen}
      onChange={props.onChange}
      empty="The project defines no roles."
    />
  );
}
