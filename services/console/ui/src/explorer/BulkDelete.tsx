/**
 * The rows selected in the grid, deleted in one request (one transaction: all or none),
 * each with the checksum it was read with — a row someone changed meanwhile refuses the
 * whole request (409) and nothing is deleted.
 */
import { useState } from "preact/hooks";
import { type Client, localPath } from "../api.ts";
import { Confirm } from "../components/Dialog.tsx";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { metadataOf, type Row, rowName } from "./rows.ts";
import type { WriteOutcome } from "./TxSummary.tsx";

/** How many rows a confirmation names before it says "and n more". */
const NAMED = 5;

function names(rows: Row[]): string {
  const all = rows.map((row) => {
    const href = metadataOf(row).href;
    return href ? rowName(localPath(href)) : "a row";
  });
  const more = all.length - NAMED;
  return all.slice(0, NAMED).join(", ") + (more > 0 ? ` and ${more} more` : "");
}

export function BulkDelete(props: {
  client: Client;
  collectionPath: string;
  selected: Row[];
  keyColumns: string[];
  onDeleted: (outcome: WriteOutcome) => void;
  onClear: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<unknown>();
  const n = props.selected.length;

  async function remove() {
    setAsking(false);
    setError(undefined);
    const body = props.selected.map((row) => {
      const meta = metadataOf(row);
      const object: Record<string, unknown> = {
        "@metadata": { action: "DELETE", checksum: meta.checksum, href: meta.href },
      };
      for (const k of props.keyColumns) object[k] = row[k];
      return object;
    });
    try {
      const r = await props.client.call<{ txsummary: Row[] }>("PUT", props.collectionPath, { body });
      props.onDeleted({
        what: `Deleted ${n} selected`,
        txsummary: r.body.txsummary ?? [],
        written: props.selected.flatMap((row) => {
          const href = metadataOf(row).href;
          return href ? [localPath(href)] : [];
        }),
      });
    } catch (err) {
      setError(err);
    }
  }

  if (n === 0) return null;
  return (
    <div class="bulk">
      <span>{n} selected</span>
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Delete selected
      </button>
      <button type="button" onClick={props.onClear}>
        Clear selection
      </button>
      <ErrorNotice error={error} />
      {asking && (
        <Confirm
          title={`Delete ${n} row(s)?`}
          question={`${names(props.selected)}. All of them are deleted in one transaction, or none: if someone changed one since you read it, nothing is deleted.`}
          confirmLabel="Delete"
          onConfirm={remove}
          onCancel={() => setAsking(false)}
        />
      )}
    </div>
  );
}
