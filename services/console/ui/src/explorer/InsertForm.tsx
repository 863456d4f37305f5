/**
 * A new row of a table or resource: one typed editor per attribute; empty ones are left
 * out (so defaults and generated keys apply), "null" sends null. Attributes computed by
 * rules are not offered: the rules set them.
 */
import { useState } from "preact/hooks";
import type { Client } from "../api.ts";
import { Dialog } from "../components/Dialog.tsx";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { AttributeEditor } from "./AttributeEditor.tsx";
import type { ColumnInfo } from "./columns.ts";
import type { Row } from "./rows.ts";
import type { WriteOutcome } from "./TxSummary.tsx";
import { type Draft, typedValue } from "./typed-values.ts";

const EMPTY: Draft = { text: "", isNull: false };

export function InsertForm(props: {
  client: Client;
  collectionPath: string;
  title: string;
  columns: ColumnInfo[];
  onInserted: (outcome: WriteOutcome) => void;
  onClose: () => void;
}) {
  const [drafts, setDrafts] = useState<Record<string, Draft>>({});
  const [invalid, setInvalid] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const editable = props.columns.filter((c) => !c.derived);
  const derived = props.columns.filter((c) => c.derived);

  async function insert(e: Event) {
    e.preventDefault();
    setError(undefined);
    const body: Record<string, unknown> = {};
    const problems: Record<string, string> = {};
    for (const c of editable) {
      const draft = drafts[c.name] ?? EMPTY;
      if (!draft.isNull && draft.text === "") continue;
      const typed = typedValue(c.type, draft);
      if (typed.ok) body[c.name] = typed.value;
      else problems[c.name] = typed.message;
    }
    setInvalid(problems);
    if (Object.keys(problems).length > 0) return;
    try {
      const r = await props.client.call<{ txsummary: Row[] }>("POST", props.collectionPath, { body });
      props.onInserted({ what: "Inserted", txsummary: r.body.txsummary ?? [] });
    } catch (err) {
      setError(err);
    }
  }

  return (
    <Dialog title={`New row in ${props.title}`} onClose={props.onClose}>
      <form onSubmit={insert}>
        {editable.map((c, i) => (
          <AttributeEditor
            key={c.name}
            id={`insert-${i}`}
            column={c}
            draft={drafts[c.name] ?? EMPTY}
            note={c.generated ? "generated when empty" : "left out when empty"}
            error={invalid[c.name]}
            onChange={(d) => setDrafts((old) => ({ ...old, [c.name]: d }))}
          />
        ))}
        {derived.length > 0 && (
          <p class="muted">Computed by rules: {derived.map((c) => c.name).join(", ")}.</p>
        )}
        <ErrorNotice error={error} />
        <div class="actions">
          <button type="submit" class="primary">
            Insert
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
