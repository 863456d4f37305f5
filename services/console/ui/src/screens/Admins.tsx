/** The account's administrators: everyone lists them; role admin adds, changes and removes them. */
import { useState } from "preact/hooks";
import type { AdminContext } from "../admin-context.ts";
import { seg } from "../api.ts";
import { Confirm } from "../components/Dialog.tsx";
import { Outcome } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { FormCard } from "../components/FormCard.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { RowAction, Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { useAction } from "../components/useAction.ts";
import { useLoad } from "../components/useLoad.ts";

interface Admin {
  login: string;
  role: string;
  created: string;
  updated: string;
}

export function Admins({ context }: { context: AdminContext }) {
  const adminsPath = `${context.accountPath}/admins`;
  const admins = useLoad(
    async () => (await context.client.call<Admin[]>("GET", adminsPath)).body,
    [adminsPath],
  );
  const [login, setLogin] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState("reader");
  const [removing, setRemoving] = useState<string>();
  const action = useAction();

  const save = () => {
    void action.run(async () => {
      const body: Record<string, string> = { role };
      if (password) body.password = password;
      const r = await context.client.call<Admin>("PUT", `${adminsPath}/${seg(login)}`, { body });
      setLogin("");
      setPassword("");
      await admins.reload();
      return `Administrator ${r.body.login} ${r.status === 201 ? "added" : "updated"} (${r.body.role}).`;
    });
  };
  const remove = (name: string) => {
    setRemoving(undefined);
    void action.run(async () => {
      await context.client.call("DELETE", `${adminsPath}/${seg(name)}`);
      await admins.reload();
      return `Administrator ${name} removed; their keys stopped working.`;
    });
  };

  return (
    <section aria-labelledby="admins-title" class="split" aria-busy={admins.loading}>
      <div>
        <ScreenHeading id="admins-title" title="Administrators" />
        <LoadStatus what="administrators" load={admins} />
        {admins.value && (
          <Table
            label="Administrators"
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
                : (a) => <RowAction label="Remove" name={a.login} onClick={() => setRemoving(a.login)} />
            }
          />
        )}
      </div>
      {!context.readOnly && (
        <FormCard
          title="Add or change an administrator"
          submitLabel="Save administrator"
          busy={action.busy}
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
      <Outcome action={action} />
      {removing && (
        <Confirm
          title={
            <>
              Remove <bdi>{removing}</bdi>?
            </>
          }
          question="Their admin keys stop working at once."
          confirmLabel="Remove"
          onConfirm={() => remove(removing)}
          onCancel={() => setRemoving(undefined)}
        />
      )}
    </section>
  );
}
