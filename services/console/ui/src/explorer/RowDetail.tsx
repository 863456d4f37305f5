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
import { readDraft, rowDraftPlace, writeDraft } from "../drafts.ts";
import { AttributeEditor } from "./AttributeEditor.tsx";
import { ChildRows } from "./ChildRows.tsx";
import { type ColumnInfo, readOnlyReason } from "./columns.ts";
import { childListsOf, childNamesOf, columnsOf, metadataOf, type Row, rowName } from "./rows.ts";
import type { WriteOutcome } from "./TxSummary.tsx";
import { type Draft, draftChanged, draftOf, guessedType, typedValue } from "./typed-values.ts";

/** A row's unsaved edits, with the checksum of the row they were made on. */
interface RowDraft {
  checksum: string | undefined;
  edits: Record<string, Draft>;
}

/**
 * The row with its draft, if the tab has one: the edits, and the checksum they were made
 * from (saving sends it, so a row changed since is a 409, never overwritten).
 */
function withDraft(row: Row): { row: Row; edits: Record<string, Draft> } {
  const meta = metadataOf(row);
  const draft = meta.href ? readDraft<RowDraft>(rowDraftPlace(localPath(meta.href))) : undefined;
  if (!draft) return { row, edits: {} };
  return { row: { ...row, "@metadata": { ...meta, checksum: draft.checksum } }, edits: draft.edits };
}

/** The row's attributes as columns: the definition's when known, else guessed from the row. */
function attributesOf(row: Row, columns: ColumnInfo[] | undefined, children: Set<string>): ColumnInfo[] {
  if (columns) return columns.filter((c) => c.name in row);
  return columnsOf([row], children).map((name) => ({
    name,
    type: guessedType(row[name]),
    required: false,
    generated: false,
    key: false,
  }));
}

export function RowDetail(props: {
  client: Client;
  row: Row;
  /** undefined: not described by a definition (a JavaScript resource). */
  columns: ColumnInfo[] | undefined;
  /** Shown, not edited (an account reader's session). */
  readOnly?: boolean | undefined;
  /** Names of its nested child lists (a custom resource's sub-resources). */
  children: string[];
  onWritten: (outcome: WriteOutcome, deleted: boolean) => void;
  onClose: () => void;
}) {
  const [row, setRow] = useState(() => withDraft(props.row).row);
  const [edits, setEdits] = useState<Record<string, Draft>>(() => withDraft(props.row).edits);
  const [invalid, setInvalid] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [conflict, setConflict] = useState(false);
  /** The row as stored when a save was refused (409), and which of the user's edits to keep. */
  const [stored, setStored] = useState<Row>();
  const [keep, setKeep] = useState<Set<string>>(new Set());
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
    const before = metadataOf(shown.current);
    const now = metadataOf(props.row);
    // The same row read again (a new key after signing in again): the user's edits stay.
    const sameRow = before.href === now.href && before.checksum === now.checksum;
    if (shown.current !== props.row && sameRow) {
      shown.current = props.row;
      return;
    }
    if (shown.current !== props.row) {
      shown.current = props.row;
      const restored = withDraft(props.row);
      setRow(restored.row);
      setEdits(restored.edits);
      setInvalid({});
      setError(undefined);
      setConflict(false);
      setStored(undefined);
      setLinked(undefined);
    }
    headingRef.current?.focus();
  }, [props.row]);

  const meta = metadataOf(row);
  const href = meta.href ? localPath(meta.href) : undefined;
  const children = childNamesOf([row], props.children);
  const attributes = attributesOf(row, props.columns, children);
  const typeOf = (name: string) => attributes.find((a) => a.name === name)?.type ?? "string";
  const changedEdits = Object.entries(edits).filter(([k, draft]) => draftChanged(typeOf(k), row[k], draft));
  const changed = changedEdits.map(([k]) => k);
  // The edits are a draft of this row (kept in the tab, with the checksum they were made from)
  // until saved or dropped: an expired session, a 401 or a reload loses nothing, and saving
  // later is still conditional on that checksum. Written in the task of the edit itself (a layout
  // effect), not after the next paint: a reload or a closed tab right after typing keeps it too.
  useLayoutEffect(() => {
    if (!href || props.readOnly) return;
    const kept = Object.fromEntries(changedEdits);
    writeDraft<RowDraft>(
      rowDraftPlace(href),
      changed.length > 0 ? { checksum: meta.checksum, edits: kept } : undefined,
    );
  }, [href, meta.checksum, changed.join("\n"), JSON.stringify(edits)]);

  async function reload() {
    if (!href) return;
    setError(undefined);
    try {
      const r = await props.client.call<Row[]>("GET", href);
      const fresh = r.body[0];
      if (!fresh) throw new Error("The row no longer exists (someone deleted it).");
      setRow(fresh);
      setEdits({});
      setInvalid({});
      setConflict(false);
      headingRef.current?.focus();
    } catch (err) {
      setError(err);
    }
  }

  /** On a 409: the stored row, to set the user's edits against it attribute by attribute. */
  async function compare() {
    setConflict(true);
    if (!href) return;
    try {
      const fresh = (await props.client.call<Row[]>("GET", href)).body[0];
      if (!fresh) throw new Error("The row no longer exists (someone deleted it).");
      setStored(fresh);
      setKeep(new Set(changed));
    } catch (err) {
      setError(err);
    }
  }

  /** Takes the stored row (its checksum) with the edits the user keeps: saving again stays conditional. */
  function resolve() {
    if (!stored) return;
    setRow(stored);
    setEdits((old) => Object.fromEntries(Object.entries(old).filter(([k]) => keep.has(k))));
    setInvalid({});
    setConflict(false);
    setStored(undefined);
    headingRef.current?.focus();
  }

  async function save(e: Event) {
    e.preventDefault();
    if (!href) return;
    setError(undefined);
    const body: Record<string, unknown> = { "@metadata": { checksum: meta.checksum } };
    const problems: Record<string, string> = {};
    for (const k of changed) {
      const typed = typedValue(typeOf(k), edits[k] ?? { text: "", isNull: true });
      if (typed.ok) body[k] = typed.value;
      else problems[k] = typed.message;
    }
    setInvalid(problems);
    if (Object.keys(problems).length > 0) return;
    try {
      const r = await props.client.call<{ txsummary: Row[] }>("PUT", href, { body });
      // Saved: the draft goes now, not once the row is read again (the summary shows before that).
      writeDraft(rowDraftPlace(href), undefined);
      props.onWritten({ what: "Saved", txsummary: r.body.txsummary ?? [] }, false);
      await reload();
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 409) await compare();
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
      writeDraft(rowDraftPlace(href), undefined);
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
      setLinked({ title, rows: r.body ?? [] });
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section
      class="detail card"
      aria-labelledby="row-title"
      onKeyDown={(e) => {
        // Escape goes back to the grid (a dialog's Escape is the dialog's own).
        if (e.key === "Escape" && !(e.target as HTMLElement).closest("dialog")) props.onClose();
      }}
    >
      <div class="heading">
        <h2 id="row-title" tabIndex={-1} ref={headingRef}>
          Row {href ? <bdi>{rowName(href)}</bdi> : null}
        </h2>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      {conflict && (
        <div class="notice warning" role="alert" tabIndex={-1} ref={conflictRef}>
          <strong class="notice-title">Someone else changed this row</strong>
          <p>
            It changed since you opened it, so nothing was written. Choose, for each attribute you changed,
            your value or the stored one; then save again (it is refused again if the row changes meanwhile).
          </p>
          {stored && (
            <table class="grid conflict-diff">
              <caption class="sr-only">Your values and the stored ones</caption>
              <thead>
                <tr>
                  <th scope="col">Attribute</th>
                  <th scope="col">Yours</th>
                  <th scope="col">Stored</th>
                  <th scope="col">Keep yours</th>
                </tr>
              </thead>
              <tbody>
                {changed.map((k) => {
                  const mine = typedValue(typeOf(k), edits[k] ?? { text: "", isNull: true });
                  return (
                    <tr key={k}>
                      <th scope="row">
                        <bdi>{k}</bdi>
                      </th>
                      <td>{mine.ok ? <Value value={mine.value} /> : (edits[k]?.text ?? "")}</td>
                      <td>
                        <Value value={stored[k]} />
                      </td>
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Keep your ${k}`}
                          checked={keep.has(k)}
                          onChange={(e) => {
                            const on = e.currentTarget.checked;
                            setKeep((old) => {
                              const next = new Set(old);
                              if (on) next.add(k);
                              else next.delete(k);
                              return next;
                            });
                          }}
                        />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
          <div class="actions">
            <button type="button" class="primary" onClick={resolve} disabled={!stored}>
              Use these values
            </button>
            <button type="button" onClick={reload}>
              Reload the row (drop your edits)
            </button>
          </div>
        </div>
      )}
      <ErrorNotice error={error} />
      <form onSubmit={save}>
        <div class="attributes-form">
          {attributes.map((column, i) => (
            <AttributeEditor
              key={column.name}
              id={`attr-${i}`}
              column={column}
              draft={edits[column.name] ?? draftOf(column.type, row[column.name])}
              readOnly={props.readOnly ? "reading only" : readOnlyReason(column)}
              error={invalid[column.name]}
              onChange={(draft) => setEdits((old) => ({ ...old, [column.name]: draft }))}
            />
          ))}
        </div>
        <div class="actions">
          {!props.readOnly && (
            <button type="submit" class="primary" disabled={changed.length === 0 || !href}>
              Save changes
            </button>
          )}
          <button type="button" onClick={reload} disabled={!href}>
            Reload
          </button>
          {!props.readOnly && (
            <button type="button" class="danger" onClick={() => setConfirmDelete(true)} disabled={!href}>
              Delete row
            </button>
          )}
          <span class="muted">checksum {meta.checksum}</span>
        </div>
      </form>
      {childListsOf(row, children).map(([name, list]) => (
        <ChildRows key={`${meta.checksum}-${name}`} client={props.client} title={name} list={list} />
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
      {linked && (
        <ChildRows key={linked.title} client={props.client} title={linked.title} list={linked.rows} />
      )}
      {confirmDelete && (
        <Confirm
          title={<>Delete {href ? <bdi>{rowName(href)}</bdi> : "this row"}?</>}
          question="It is deleted if nobody changed it since you read it (its checksum still matches)."
          confirmLabel="Delete"
          onConfirm={remove}
          onCancel={() => setConfirmDelete(false)}
        />
      )}
    </section>
  );
}
