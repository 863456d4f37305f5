/**
 * Imports a CSV file through the data API in three steps: choosing a file shows a preview
 * (its columns mapped to attributes, how many rows, the first lines refused and why) and
 * sends nothing; "Import n rows" sends them in batches (csv-batch-insert.ts: one request,
 * one transaction and one audit entry per batch) with progress; the result names every
 * refused line. Rules, defaults and generated keys apply as for any insert.
 */
import { useEffect, useState } from "preact/hooks";
import type { Client } from "../api.ts";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import type { ColumnInfo } from "./columns.ts";
import { insertInBatches } from "./csv-batch-insert.ts";
import { type ImportPlan, importPlan, type LineError } from "./csv-import-plan.ts";

/** How many refused lines the preview lists (the result lists them all). */
const PREVIEW_REFUSALS = 10;

interface Preview extends ImportPlan {
  file: string;
}

interface Outcome {
  file: string;
  inserted: number;
  records: number;
  errors: LineError[];
}

const fmt = (n: number) => n.toLocaleString("en");

function Refusals(props: { errors: LineError[] }) {
  return (
    <ul class="import-errors">
      {props.errors.map((e) => (
        <li key={e.line}>
          Line {e.line}: <bdi>{e.message}</bdi>
        </li>
      ))}
    </ul>
  );
}

export function CsvImport(props: {
  client: Client;
  collectionPath: string;
  columns: ColumnInfo[];
  /** The open row: when the user opens another (or closes it), the last import's result goes. */
  row: string | undefined;
  onImported: () => void;
}) {
  const [preview, setPreview] = useState<Preview>();
  const [progress, setProgress] = useState<{ done: number; total: number }>();
  const [outcome, setOutcome] = useState<Outcome>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setOutcome(undefined);
    setError(undefined);
  }, [props.row]);

  async function choose(file: File) {
    setOutcome(undefined);
    setPreview(undefined);
    setError(undefined);
    try {
      setPreview({ file: file.name, ...importPlan(await file.text(), props.columns) });
    } catch (err) {
      setError(err);
    }
  }

  async function importRows(plan: Preview) {
    setPreview(undefined);
    const total = plan.rows.length;
    setProgress({ done: 0, total });
    const sent = await insertInBatches(props.client, props.collectionPath, plan.rows, (done) =>
      setProgress({ done, total }),
    );
    setProgress(undefined);
    if (sent.stopped) setError(sent.stopped);
    setOutcome({
      file: plan.file,
      inserted: sent.inserted,
      records: total + plan.refused.length,
      errors: [...plan.refused, ...sent.refused].sort((a, b) => a.line - b.line),
    });
    if (sent.inserted > 0) props.onImported();
  }

  return (
    <div class="csv-import">
      <label for="csv-import" class="button">
        Import CSV…
      </label>
      <input
        id="csv-import"
        class="file-input"
        type="file"
        accept=".csv,text/csv"
        disabled={progress !== undefined}
        onChange={(e) => {
          const input = e.currentTarget;
          const file = input.files?.[0];
          input.value = "";
          if (file) void choose(file);
        }}
      />
      <span role="status" class="muted">
        {progress && `Importing: ${fmt(progress.done)} of ${fmt(progress.total)} rows…`}
      </span>
      {progress && <progress max={progress.total} value={progress.done} aria-label="Import progress" />}
      <ErrorNotice error={error} title="Import failed" />
      {preview && (
        <section class="import-preview notice" aria-label="Import preview">
          <p>
            <bdi>{preview.file}</bdi>: {fmt(preview.rows.length + preview.refused.length)} rows;{" "}
            {fmt(preview.rows.length)} can be imported
            {preview.refused.length ? `, ${fmt(preview.refused.length)} are refused` : ""}. Nothing is sent
            yet.
          </p>
          <p>
            Columns:{" "}
            {preview.header.map((c, i) => (
              <span key={c.name}>
                {i > 0 && ", "}
                <bdi>{c.name}</bdi> <span class="muted">({c.type})</span>
              </span>
            ))}
          </p>
          {preview.refused.length > 0 && <Refusals errors={preview.refused.slice(0, PREVIEW_REFUSALS)} />}
          <div class="actions">
            <button
              type="button"
              class="primary"
              disabled={preview.rows.length === 0}
              onClick={() => void importRows(preview)}
            >
              Import {fmt(preview.rows.length)} rows
            </button>
            <button type="button" onClick={() => setPreview(undefined)}>
              Cancel
            </button>
          </div>
        </section>
      )}
      {outcome && (
        <section
          class={`import-outcome notice ${outcome.errors.length ? "warning" : "ok"}`}
          aria-label="Import"
        >
          <p>
            <bdi>{outcome.file}</bdi>: {fmt(outcome.inserted)} of {fmt(outcome.records)} rows inserted
            {outcome.errors.length ? `; ${fmt(outcome.errors.length)} refused:` : "."}
          </p>
          {outcome.errors.length > 0 && <Refusals errors={outcome.errors} />}
        </section>
      )}
    </div>
  );
}
