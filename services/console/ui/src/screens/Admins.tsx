/** The account's administrators: everyone lists them; role admin adds, changes and removes them. */
import { useState } from "preact/hooks";
import type { AdminView } from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { Confirm } from "../components/Dialog.tsx";
import { Outcome } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { FormCard } from "../components/FormCard.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { RowAction, Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { useCollection } from "../components/useCollection.ts";

export function Admins({ context }: { context: AdminContext }) {
  const { api } = context;
  const admins = useCollection<AdminView>(
    api.admins.list,
    async (a) => {
      await api.admins.remove(a.login);
      return `Administrator ${a.login} removed; their keys stopped working.`;
    },
    [api],
  );
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState("reader");

  const save = () => {
    void admins.change(async () => {
      const r = await api.admins.put(login, password ? { role, password } : { role });
      setLogin("");
      setPassword("");
      return `Administrator ${r.body.login} ${r.status === 201 ? "added" : "updated"} (${r.body.role}).`;
    });
  };

  return (
    <section aria-labelledby="admins-title" class="split" aria-busy={admins.loading}>
      <div>
        <ScreenHeading id="admins-title" title="Administrators" />
        <LoadStatus what="administrators" load={admins} />
        {admins.value && (
          <Table
            label="List of administrators"
            rows={admins.value}
            rowKey={(a) => a.login}
            columns={[
              { title: "Login", cell: (a) => <bdi>{a.login}</bdi> },
              {
                title: "Role",
                cell: (a) => (
                  <span class={`badge role-${a.role === "admin" ? "admin" : "reader"}`}>{a.role}</span>
                ),
              },
              { title: "Created", cell: (a) => <Time iso={a.created} /> },
              { title: "Updated", cell: (a) => <Time iso={a.updated} /> },
            ]}
            actions={
              context.readOnly
                ? undefined
                : (a) => <RowAction label="Remove" name={a.login} onClick={() => admins.ask(a)} />
            }
          />
        )}
      </div>
      {!context.readOnly && (
        <FormCard
          title="Add or change an administrator"
          submitLabel="Save administrator"
          busy={admins.action.busy}
          onSubmit={save}
        >
          <Field
            label="Login"
            name="admin-login"
            value={login}
            onInput={setLogin}
            required
            nameKind="admin"
          />
          <Field
            label="Password"
            name="admin-password"
            type="password"
            value={password}
            onInput={setPassword}
            autocomplete="new-password"
            hint="Required for a new administrator; setting it revokes their older keys."
          />
          <div class="field">
            <label for="admin-role">Role</label>
            <select
              id="admin-role"
              value={role}
              onChange={(e) => setRole((e.target as HTMLSelectElement).value)}
            >
              <option value="reader">reader (read only)</option>
              <option value="admin">admin</option>
            </select>
          </div>
        </FormCard>
      )}
      <Outcome action={admins.action} />
      {admins.removing && (
        <Confirm
          title={
            <>
              Remove <bdi>{admins.removing.login}</bdi>?
            </>
          }
          question="Their admin keys stop working at once."
          confirmLabel="Remove"
          onConfirm={admins.confirm}
          onCancel={admins.cancel}
        />
      )}
    </section>
  );
}
