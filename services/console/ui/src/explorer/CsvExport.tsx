/**
 * Downloads the current query (filter and order; every page of it) as CSV, in the data
 * API's own CSV form: pages of 2,000 asked with `responseformat=csv`, followed by their
 * `Link: rel="next"`, the header row kept once.
 */
import { useState } from "preact/hooks";
import { type Client, localPath } from "../api.ts";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { csvRecords } from "./csv-records.ts";

/** Rows per request: few requests, each well within the server's query time limit (503/5031). */
const EXPORT_PAGE = 2000;

function nextLink(link: string | null): string | undefined {
  const target = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link)?.[1] : undefined;
  return target ? localPath(target) : undefined;
}

/** The records of a CSV page after its header row (its first line: headers never hold a line break). */
function withoutHeader(csv: string): string {
  const end = csv.indexOf("\r\n");
  return end < 0 ? "" : csv.slice(end + 2);
}

export function CsvExport(props: {
  client: Client;
  collectionPath: string;
  filter: string;
  order: string;
  fileName: string;
}) {
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function exportAll() {
    setBusy(true);
    setError(undefined);
    const params = new URLSearchParams({ responseformat: "csv", pagesize: String(EXPORT_PAGE) });
    if (props.filter.trim()) params.set("filter", props.filter);
    if (props.order.trim()) params.set("order", props.order);
    let path: string | undefined = `${props.collectionPath}?${params}`;
    const parts: string[] = [];
    let records = 0;
    try {
      while (path) {
        const r = await props.client.call("GET", path, { headers: { accept: "text/csv" } });
        const page = parts.length === 0 ? r.text : withoutHeader(r.text);
        parts.push(page);
        records += csvRecords(page).length - (parts.length === 1 ? 1 : 0);
        setStatus(`Exporting… ${records.toLocaleString("en")} rows so far.`);
        path = nextLink(r.headers.get("link"));
      }
      const url = URL.createObjectURL(new Blob(parts, { type: "text/csv;charset=utf-8" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = `${props.fileName}.csv`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      setStatus(`Exported ${records.toLocaleString("en")} rows to ${props.fileName}.csv.`);
    } catch (err) {
      setStatus(undefined);
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="csv-export">
      <button type="button" onClick={exportAll} disabled={busy}>
        Export CSV
      </button>
      <span role="status" class="muted">
        {status}
      </span>
      <ErrorNotice error={error} onRetry={exportAll} />
    </div>
  );
}
