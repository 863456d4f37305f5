/**
 * One row: its attributes (editable), its nested children, its child links. Saving
 * sends the checksum as read; a 409 means someone changed the row meanwhile, and
 * Reload shows their version. Deleting sends the checksum too.
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, type Client, localPath } from "../api.ts";
import { Confirm } from "../components/Dialog.tsx";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { useFocusOn } from "../components/focus.ts";
import { Value } from "../components/Value.tsx";
import { childListsOf, columnsOf, metadataOf, type Row } from "./rows.ts";
import type { WriteOutcome } from "./TxSummary.tsx";
import { editableText, editedValue } from "./values.ts";

function ChildRows(props: { title: string; rows: Row[] }) {
  const rows = props.rows.filter((r) => Object.keys(r).some((k) => k !== "@metadata"));
  const columns = columnsOf(rows);
  return (
    <section class="children" aria-label={props.title}>
      <h3>
        {props.title} <span class="muted">({rows.length})</span>
      </h3>
      {rows.length === 0 ? (
        <p class="empty">None.</p>
      ) : (
        <table class="grid data">
          <thead>
            <tr>
              {columns.map((c) => (
                <th scope="col" key={c}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={metadataOf(r).href ?? i}>
                {columns.map((c) => (
                  <td key={c}>
                    <Value value={r[c]} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {rows.map((r, i) =>
        childListsOf(r).map(([name, list]) => (
          <ChildRows key={`${i}-${name}`} title={`${name} of ${props.title} #${i + 1}`} rows={list} />
        )),
      )}
    </section>
  );
}

export function RowDetail(props: {
  client: Client;
  row: Row;
  onWritten: (outcome: WriteOutcome, deleted: boolean) => void;
  onClose: () => void;
}) {
  const [row, setRow] = useState(props.row);
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [conflict, setConflict] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [linked, setLinked] = useState<{ title: string; rows: Row[] }>();
  const conflictRef = useRef<HTMLDivElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useFocusOn(conflictRef, conflict);
  // Another row opened in place: start over with it. Not on mount: the state starts from
  // props.row already. A layout effect, so the reset and the focus land before the browser
  // paints or takes a keystroke: nothing typed into the new row can be wiped or lose focus.
  const shown = useRef(props.row);
  useLayoutEffect(() => {
    if (shown.current !== props.row) {
      shown.current = props.row;
      setRow(props.row);
      setEdits({});
      setError(undefined);
      setConflict(false);
      setLinked(undefined);
    }
    headingRef.current?.focus();
  }, [props.row]);

  const meta = metadataOf(row);
  const href = meta.href ? localPath(meta.href) : undefined;
  const attributes = columnsOf([row]);
  const changed = Object.keys(edits).filter((k) => edits[k] !== editableText(row[k]));

  async function reload() {
    if (!href) return;
    setError(undefined);
    try {
      const r = await props.client.call<Row[]>("GET", href);
      const fresh = r.body[0];
      if (!fresh) throw new Error("The row no longer exists (someone deleted it).");
      setRow(fresh);
      setEdits({});
      setConflict(false);
      headingRef.current?.focus();
    } catch (err) {
      setError(err);
    }
  }

  async function save(e: Event) {
    e.preventDefault();
    if (!href) return;
    setError(undefined);
    const body: Record<string, unknown> = { "@metadata": { checksum: meta.checksum } };
    for (const k of changed) body[k] = editedValue(row[k], edits[k]!);
    try {
      const r = await props.client.call<{ txsummary: Row[] }>("PUT", href, { body });
      props.onWritten({ what: "Saved", txsummary: r.body.txsummary ?? [] }, false);
      await reload();
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 409) setConflict(true);
      else setError(err);
    }
  }

  async function remove() {
    setConfirmDelete(false);
    if (!href) return;
    setError(undefined);
    try {
      const separator = href.includes("?") ? "&" : "?";
      const r = await props.client.call<{ txsummary: Row[] }>(
        "DELETE",
        `${href}${separator}checksum=${encodeURIComponent(meta.checksum ?? "")}`,
      );
      props.onWritten({ what: "Deleted", txsummary: r.body.txsummary ?? [] }, true);
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 409) setConflict(true);
      else setError(err);
    }
  }

  async function follow(title: string, link: string) {
    setError(undefined);
    try {
      const r = await props.client.call<Row[]>("GET", localPath(link));
      setLinked({ title, rows: (r.body ?? []).filter((x) => !("next_batch" in metadataOf(x))) });
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section class="detail card" aria-labelledby="row-title">
      <div class="heading">
        <h2 id="row-title" tabIndex={-1} ref={headingRef}>
          Row {href ? <code>{href}</code> : null}
        </h2>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      {conflict && (
        <div class="notice warning" role="alert" tabIndex={-1} ref={conflictRef}>
          <strong class="notice-title">Someone else changed this row</strong>
          <p>
            It changed since you opened it, so nothing was written. Reload to see the current values (your
            edits are discarded), then change it again.
          </p>
          <button type="button" onClick={reload}>
            Reload the row
          </button>
        </div>
      )}
      <ErrorNotice error={error} />
      <form onSubmit={save}>
        <div class="attributes-form">
          {attributes.map((name) => {
            const id = `attr-${attributes.indexOf(name)}`;
            return (
              <div class="field" key={name}>
                <label for={id}>{name}</label>
                <input
                  id={id}
                  value={edits[name] ?? editableText(row[name])}
                  placeholder={row[name] === null ? "null" : undefined}
                  onInput={(e) => {
                    const value = (e.target as HTMLInputElement).value;
                    setEdits((old) => ({ ...old, [name]: value }));
                  }}
                />
              </div>
            );
          })}
        </div>
        <div class="actions">
          <button type="submit" class="primary" disabled={changed.length === 0 || !href}>
            Save changes
          </button>
          <button type="button" onClick={reload} disabled={!href}>
            Reload
          </button>
          <button type="button" class="danger" onClick={() => setConfirmDelete(true)} disabled={!href}>
            Delete row
          </button>
          <span class="muted">checksum {meta.checksum}</span>
        </div>
      </form>
      {childListsOf(row).map(([name, list]) => (
        <ChildRows key={name} title={name} rows={list} />
      ))}
      {meta.links && meta.links.length > 0 && (
        <div class="actions">
          {meta.links
            .filter((l) => l.rel === "children")
            .map((l) => (
              <button type="button" key={l.href} onClick={() => follow(l.role ?? "children", l.href)}>
                Show {l.role ?? "children"}
              </button>
            ))}
        </div>
      )}
      {linked && <ChildRows title={linked.title} rows={linked.rows} />}
      {confirmDelete && (
        <Confirm
          title="Delete this row?"
          question="It is deleted if nobody changed it since you read it (its checksum still matches)."
          confirmLabel="Delete"
          onConfirm={remove}
          onCancel={() => setConfirmDelete(false)}
        />
      )}
    </section>
  );
}
