/** A project's API keys: list, create a manual key (its value shown once), delete. */
import { useState } from "preact/hooks";
import type { ApiKeyView } from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { Confirm, Dialog } from "../components/Dialog.tsx";
import { Outcome } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { FormCard } from "../components/FormCard.tsx";
import { GlobalsField } from "../components/GlobalsField.tsx";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { RolePicker } from "../components/RolePicker.tsx";
import { RowAction, Table } from "../components/Table.tsx";
import { fromUtcInput, Time } from "../components/Time.tsx";
import { useCollection } from "../components/useCollection.ts";
import { Names } from "../components/Value.tsx";
import { parseGlobals } from "../globals-text.ts";

export function ApiKeys(props: { context: AdminContext; project: string; roles: string[] }) {
  const { context } = props;
  const { api } = context;
  const keys = useCollection<ApiKeyView>(
    (signal) => api.keys.list(props.project, signal),
    async (key) => {
      await api.keys.remove(props.project, key.id);
      return `Key ${key.name} deleted: it stopped working at once.`;
    },
    [api, props.project],
  );
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [expires, setExpires] = useState("");
  const [roles, setRoles] = useState<string[]>([]);
  const [globals, setGlobals] = useState("");
  const [created, setCreated] = useState<ApiKeyView>();

  const create = () => {
    void keys.change(async () => {
      setCreated(
        await api.keys.create(props.project, {
          name,
          roles,
          ...(description ? { description } : {}),
          ...(expires ? { expiration: fromUtcInput(expires) } : {}),
          ...(globals.trim() ? { globals: parseGlobals(globals) } : {}),
        }),
      );
      setName("");
      setDescription("");
      setExpires("");
      setRoles([]);
      setGlobals("");
      return undefined;
    });
  };

  return (
    <div class="split" aria-busy={keys.loading}>
      <div>
        <h2>API keys</h2>
        <LoadStatus what="API keys" load={keys} />
        {keys.value?.length === 0 && <p class="empty">No keys.</p>}
        {keys.value && keys.value.length > 0 && (
          <Table
            label="API keys"
            rows={keys.value}
            rowKey={(k) => k.id}
            columns={[
              {
                title: "Name",
                cell: (k) => (
                  <>
                    <bdi>{k.name}</bdi>
                    {k.description && <div class="muted">{k.description}</div>}
                  </>
                ),
              },
              { title: "Kind", cell: (k) => k.kind },
              { title: "Status", cell: (k) => <span class={`badge status-${k.status}`}>{k.status}</span> },
              { title: "Roles", cell: (k) => <Names names={k.roles} /> },
              { title: "Expires", cell: (k) => <Time iso={k.expiration} /> },
            ]}
            actions={
              context.readOnly
                ? undefined
                : (k) => <RowAction label="Delete" name={k.name} onClick={() => keys.ask(k)} />
            }
          />
        )}
      </div>
      {!context.readOnly && (
        <FormCard title="New manual key" submitLabel="Create key" busy={keys.action.busy} onSubmit={create}>
          <Field label="Name" name="key-name" value={name} onInput={setName} required />
          <Field label="Description" name="key-description" value={description} onInput={setDescription} />
          <Field
            label="Expires (UTC)"
            name="key-expires"
            type="datetime-local"
            value={expires}
            onInput={setExpires}
            hint="Empty: the key does not expire."
          />
          <RolePicker roles={props.roles} chosen={roles} onChange={setRoles} />
          <GlobalsField name="key-globals" value={globals} onInput={setGlobals} />
        </FormCard>
      )}
      <Outcome action={keys.action} />
      {created?.apikey && (
        <NewKey apiKey={created} value={created.apikey} onClose={() => setCreated(undefined)} />
      )}
      {keys.removing && (
        <Confirm
          title={
            <>
              Delete key <bdi>{keys.removing.name}</bdi>?
            </>
          }
          question="Programs using this key are refused from their next request on."
          confirmLabel="Delete"
          onConfirm={keys.confirm}
          onCancel={keys.cancel}
        />
      )}
    </div>
  );
}

/** The one time a key's value is shown: copy it now. */
function NewKey(props: { apiKey: ApiKeyView; value: string; onClose: () => void }) {
  const [copied, setCopied] = useState<string>();
  async function copy() {
    try {
      await navigator.clipboard.writeText(props.value);
      setCopied("Copied to the clipboard.");
    } catch {
      setCopied("The browser refused the clipboard: select the key and copy it yourself.");
    }
  }
  return (
    <Dialog
      title={
        <>
          Key <bdi>{props.apiKey.name}</bdi> created
        </>
      }
      onClose={props.onClose}
    >
      <p class="notice warning">This is the only time the key is shown. Copy it now and keep it safe.</p>
      <div class="field">
        <label for="new-key-value">API key</label>
        <div class="copy-row">
          <input
            id="new-key-value"
            class="code"
            readOnly
            value={props.value}
            onFocus={(e) => (e.target as HTMLInputElement).select()}
          />
          <button type="button" onClick={copy} autofocus>
            Copy
          </button>
        </div>
        <p class="hint" role="status">
          {copied}
        </p>
      </div>
      <p class="hint">
        Use it as <code>Authorization: Tessera &lt;key&gt;:1</code>.
      </p>
      <div class="actions">
        <button type="button" onClick={props.onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
