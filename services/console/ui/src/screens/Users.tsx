/**
 * A project's built-in users: list; add one, or change one (roles, globals, key lifetime)
 * with or without a new password; delete.
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import type { UserView } from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { Confirm } from "../components/Dialog.tsx";
import { Outcome } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { FormCard } from "../components/FormCard.tsx";
import { GlobalsField } from "../components/GlobalsField.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { RolePicker } from "../components/RolePicker.tsx";
import { RowAction, Table } from "../components/Table.tsx";
import { useCollection } from "../components/useCollection.ts";
import { Names, valueText } from "../components/Value.tsx";
import { parseGlobals } from "../globals-text.ts";

const lifetimeText = (u: UserView) =>
  u.keyLifetimeSeconds === null ? "project's" : `${u.keyLifetimeSeconds} s`;

export function Users(props: { context: AdminContext; project: string; roles: string[] }) {
  const { context } = props;
  const { api } = context;
  const users = useCollection<UserView>(
    (signal) => api.users.list(props.project, signal),
    async (u) => {
      await api.users.remove(props.project, u.username);
      return `User ${u.username} deleted.`;
    },
    [api, props.project],
  );
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [roles, setRoles] = useState<string[]>([]);
  const [globals, setGlobals] = useState("");
  const [lifetime, setLifetime] = useState("");
  const [editing, setEditing] = useState(0);
  const form = useRef<HTMLDivElement>(null);
  const existing = users.value?.find((u) => u.username === username);

  // "Change" fills the form: the focus goes to its first input.
  useLayoutEffect(() => {
    if (editing) form.current?.querySelector("input")?.focus();
  }, [editing]);

  const edit = (u: UserView) => {
    setUsername(u.username);
    setPassword("");
    setRoles(u.roles);
    setGlobals(Object.keys(u.globals).length ? JSON.stringify(u.globals) : "");
    setLifetime(u.keyLifetimeSeconds === null ? "" : String(u.keyLifetimeSeconds));
    setEditing((n) => n + 1);
  };

  const save = () => {
    void users.change(async () => {
      const r = await api.users.put(props.project, username, {
        roles,
        globals: parseGlobals(globals),
        ...(password ? { password } : {}),
        ...(lifetime ? { keyLifetimeSeconds: Number(lifetime) } : {}),
      });
      setUsername("");
      setPassword("");
      setRoles([]);
      setGlobals("");
      setLifetime("");
      const kept = r.status === 200 && !password ? ", password kept" : "";
      return `User ${r.body.username} ${r.status === 201 ? "created" : `updated${kept}`}.`;
    });
  };

  return (
    <div class="split" aria-busy={users.loading}>
      <div>
        <h2>Users</h2>
        <LoadStatus what="users" load={users} />
        {users.value?.length === 0 && <p class="empty">No built-in users.</p>}
        {users.value && users.value.length > 0 && (
          <Table
            label="Users"
            rows={users.value}
            rowKey={(u) => u.username}
            columns={[
              { title: "Username", cell: (u) => <bdi>{u.username}</bdi> },
              { title: "Roles", cell: (u) => <Names names={u.roles} /> },
              {
                title: "Globals",
                cell: (u) =>
                  Object.keys(u.globals).length ? (
                    <code>{valueText(u.globals)}</code>
                  ) : (
                    <span class="muted">none</span>
                  ),
              },
              { title: "Key lifetime", cell: lifetimeText },
            ]}
            actions={
              context.readOnly
                ? undefined
                : (u) => (
                    <>
                      <button type="button" onClick={() => edit(u)}>
                        Change
                        <span class="sr-only">
                          {" "}
                          <bdi>{u.username}</bdi>
                        </span>
                      </button>
                      <RowAction label="Delete" name={u.username} onClick={() => users.ask(u)} />
                    </>
                  )
            }
          />
        )}
      </div>
      {!context.readOnly && (
        <div ref={form}>
          <FormCard
            title={existing ? `Change user ${existing.username}` : "Add a user"}
            submitLabel="Save user"
            busy={users.action.busy}
            onSubmit={save}
          >
            <Field
              label="Username"
              name="username"
              value={username}
              onInput={setUsername}
              required
              nameKind="user"
            />
            <Field
              label="Password"
              name="user-password"
              type="password"
              value={password}
              onInput={setPassword}
              required={!existing}
              minLength={8}
              autocomplete="new-password"
              hint={
                existing
                  ? "Leave empty to keep their password. At least 8 characters."
                  : "At least 8 characters."
              }
            />
            <RolePicker roles={props.roles} chosen={roles} onChange={setRoles} />
            <GlobalsField name="user-globals" value={globals} onInput={setGlobals} />
            <Field
              label="Key lifetime (seconds)"
              name="user-key-lifetime"
              type="number"
              min={1}
              max={366 * 24 * 3600}
              value={lifetime}
              onInput={setLifetime}
              hint="How long the keys of their logins live. Empty: the project's lifetime."
            />
          </FormCard>
        </div>
      )}
      <Outcome action={users.action} />
      {users.removing && (
        <Confirm
          title={
            <>
              Delete user <bdi>{users.removing.username}</bdi>?
            </>
          }
          question="The user can no longer log in. Keys already issued to the user keep working until they expire or are deleted."
          confirmLabel="Delete"
          onConfirm={users.confirm}
          onCancel={users.cancel}
        />
      )}
    </div>
  );
}
