/** A new row of a table or resource: one input per attribute; empty inputs are left out. */
import { useState } from "preact/hooks";
import type { Client } from "../api.ts";
import { Dialog } from "../components/Dialog.tsx";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import type { Row } from "./rows.ts";
import type { WriteOutcome } from "./TxSummary.tsx";

export interface AttributeInfo {
  name: string;
  type: string;
  required?: boolean;
  generated?: boolean;
}

function typed(type: string, text: string): unknown {
  if ((type === "number" || type === "integer") && Number.isFinite(Number(text))) return Number(text);
  if (type === "boolean" && (text === "true" || text === "false")) return text === "true";
  if (type === "json") {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

export function InsertForm(props: {
  client: Client;
  collectionPath: string;
  title: string;
  attributes: AttributeInfo[];
  onInserted: (outcome: WriteOutcome) => void;
  onClose: () => void;
}) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();

  async function insert(e: Event) {
    e.preventDefault();
    setError(undefined);
    const body: Record<string, unknown> = {};
    for (const a of props.attributes) {
      const text = values[a.name];
      if (text !== undefined && text !== "") body[a.name] = typed(a.type, text);
    }
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
        {props.attributes.map((a) => (
          <Field
            key={a.name}
            label={a.name}
            name={`insert-${a.name}`}
            value={values[a.name] ?? ""}
            onInput={(v) => setValues((old) => ({ ...old, [a.name]: v }))}
            hint={`${a.type}${a.required ? ", required" : ""}${a.generated ? ", generated when empty" : ""}`}
          />
        ))}
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
