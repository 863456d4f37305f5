/** Checkboxes for a project's roles. */
export function RolePicker(props: {
  roles: string[];
  chosen: string[];
  onChange: (roles: string[]) => void;
}) {
  return (
    <fieldset class="roles">
      <legend>Roles</legend>
      {props.roles.length === 0 && <p class="hint">The project defines no roles.</p>}
      {props.roles.map((role) => (
        <label key={role} class="check">
          <input
            type="checkbox"
            checked={props.chosen.includes(role)}
            onChange={(e) =>
              props.onChange(
                (e.target as HTMLInputElement).checked
                  ? [...props.chosen, role]
                  : props.chosen.filter((r) => r !== role),
              )
            }
          />{" "}
          {role}
        </label>
      ))}
    </fieldset>
  );
}
