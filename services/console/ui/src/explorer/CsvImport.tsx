/**
 * Imports a CSV file through the data API: its header row names the attributes, and each
 * record is one normal insert (POST), so rules, defaults and generated keys apply and a
 * refused record refuses only itself. An empty field is left out (null in the API's CSV
 * form: the default applies), a quoted empty one is the empty string. What failed is
 * listed by the line it starts on; nothing is sent for a file that cannot be read.
 */
import { useState } from "preact/hooks";
import { ApiFailure, type Client } from "../api.ts";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import type { ColumnInfo } from "./columns.ts";
import { type CsvRecord, csvRecords } from "./csv-records.ts";
import { typedValue } from "./typed-values.ts";

interface LineError {
  line: number;
  message: string;
}

interface Outcome {
  file: string;
  inserted: number;
  records: number;
  errors: LineError[];
}

/** The object a record inserts, or why it cannot be sent. */
function objectOf(record: CsvRecord, header: ColumnInfo[]): Record<string, unknown> | string {
  if (record.fields.length !== header.length)
    return `has ${record.fields.length} fields, the header ${header.length}`;
  const object: Record<string, unknown> = {};
  for (const [i, column] of header.entries()) {
    const field = record.fields[i] ?? { text: "", quoted: false };
    if (field.text === "" && !field.quoted) continue;
    const typed = typedValue(column.type, { text: field.text, isNull: false });
    if (!typed.ok) return `${column.name} ${typed.message}`;
    object[column.name] = typed.value;
  }
  return object;
}

export function CsvImport(props: {
  client: Client;
  collectionPath: string;
  columns: ColumnInfo[];
  onImported: () => void;
}) {
  const [progress, setProgress] = useState<string>();
  const [outcome, setOutcome] = useState<Outcome>();
  const [error, setError] = useState<unknown>();

  async function importFile(file: File) {
    setOutcome(undefined);
    setError(undefined);
    let records: CsvRecord[];
    let header: ColumnInfo[];
    try {
      records = csvRecords(await file.text());
      const names = records.shift()?.fields.map((f) => f.text) ?? [];
      if (names.length === 0) throw new Error("The file has no header row.");
      const unknown = names.filter((n) => !props.columns.some((c) => c.name === n));
      if (unknown.length > 0)
        throw new Error(`Not attributes of this collection: ${unknown.join(", ")}. Nothing was imported.`);
      header = names.flatMap((n) => props.columns.filter((c) => c.name === n));
    } catch (err) {
      setError(err);
      return;
    }
    const errors: LineError[] = [];
    let inserted = 0;
    for (const [i, record] of records.entries()) {
      setProgress(`Importing line ${record.line} (${i + 1} of ${records.length})…`);
      const object = objectOf(record, header);
      if (typeof object === "string") {
        errors.push({ line: record.line, message: object });
        continue;
      }
      try {
        await props.client.call("POST", props.collectionPath, { body: object });
        inserted++;
      } catch (err) {
        const code = err instanceof ApiFailure ? `${err.status}/${err.errorCode ?? "-"} ` : "";
        errors.push({ line: record.line, message: `${code}${(err as Error).message}` });
        if (err instanceof ApiFailure && (err.status === 0 || err.status === 401)) break;
      }
    }
    setProgress(undefined);
    setOutcome({ file: file.name, inserted, records: records.length, errors });
    if (inserted > 0) props.onImported();
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
        onChange={(e) => {
          const input = e.currentTarget;
          const file = input.files?.[0];
          input.value = "";
          if (file) void importFile(file);
        }}
      />
      <span role="status" class="muted">
        {progress}
      </span>
      <ErrorNotice error={error} title="Import failed" />
      {outcome && (
        <section
          class={`import-outcome notice ${outcome.errors.length ? "warning" : "ok"}`}
          aria-label="Import"
        >
          <p>
            {outcome.file}: {outcome.inserted} of {outcome.records} rows inserted
            {outcome.errors.length ? `; ${outcome.errors.length} refused:` : "."}
          </p>
          {outcome.errors.length > 0 && (
            <ul class="import-errors">
              {outcome.errors.map((e) => (
                <li key={e.line}>
                  Line {e.line}: <bdi>{e.message}</bdi>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </div>
  );
}
