/** A project's built-in users: list, create (or replace), delete. */
import { useState } from "preact/hooks";
import type { AdminContext } from "../admin-context.ts";
import { seg } from "../api.ts";
import { Confirm } from "../components/Dialog.tsx";
import { Outcome } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { FormCard } from "../components/FormCard.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { RolePicker } from "../components/RolePicker.tsx";
import { RowAction, Table } from "../components/Table.tsx";
import { useAction } from "../components/useAction.ts";
import { useLoad } from "../components/useLoad.ts";
import { Names } from "../components/Value.tsx";

interface User {
  username: string;
  roles: string[];
  globals?: Record<string, unknown>;
  keyLifetimeSeconds?: number | null;
}

export function Users(props: { context: AdminContext; project: string; roles: string[] }) {
  const { context } = props;
  const usersPath = `${context.accountPath}/projects/${seg(props.project)}/users`;
  const users = useLoad(async () => (await context.client.call<User[]>("GET", usersPath)).body, [usersPath]);
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [roles, setRoles] = useState<string[]>([]);
  const [deleting, setDeleting] = useState<string>();
  const action = useAction();

  const create = () => {
    void action.run(async () => {
      const r = await context.client.call<User>("PUT", `${usersPath}/${seg(username)}`, {
        body: { password, roles },
      });
      setUsername("");
      setPassword("");
      setRoles([]);
      await users.reload();
      return `User ${r.body.username} ${r.status === 201 ? "created" : "updated"}.`;
    });
  };
  const remove = (name: string) => {
    setDeleting(undefined);
    void action.run(async () => {
      await context.client.call("DELETE", `${usersPath}/${seg(name)}`);
      await users.reload();
      return `User ${name} deleted.`;
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
            ]}
            actions={
              context.readOnly
                ? undefined
                : (u) => (
                    <RowAction label="Delete" name={u.username} onClick={() => setDeleting(u.username)} />
                  )
            }
          />
        )}
      </div>
      {!context.readOnly && (
        <FormCard title="Add or replace a user" submitLabel="Save user" busy={action.busy} onSubmit={create}>
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
            required
            minLength={8}
            autocomplete="new-password"
            hint="At least 8 characters."
          />
          <RolePicker roles={props.roles} chosen={roles} onChange={setRoles} />
        </FormCard>
      )}
      <Outcome action={action} />
      {deleting && (
        <Confirm
          title={
            <>
              Delete user <bdi>{deleting}</bdi>?
            </>
          }
          question="The user can no longer log in. Keys already issued to the user keep working until they expire or are deleted."
          confirmLabel="Delete"
          onConfirm={() => remove(deleting)}
          onCancel={() => setDeleting(undefined)}
        />
      )}
    </div>
  );
}
