/**
 * Inserts rows in batches: each batch is one array POST, so one transaction and one audit
 * entry. A batch the server refuses (a 4xx: nothing of it was written) is split in halves
 * and each half sent again, down to single rows, so that every refused row is named and
 * every other one is inserted. An unreachable server or an ended session stops the import.
 */
import { ApiFailure, type Client } from "../api.ts";
import { batchesOf, type CsvRow, type LineError } from "./csv-import-plan.ts";

/** The most rows one request sends (the data API takes up to 1,000 objects in one request). */
export const IMPORT_BATCH = 250;

export interface BatchOutcome {
  inserted: number;
  refused: LineError[];
  /** Why the import stopped before the end, if it did. */
  stopped?: unknown;
}

const refusal = (err: unknown) =>
  err instanceof ApiFailure ? `${err.status}/${err.errorCode ?? "-"} ${err.message}` : String(err);

const isRowProblem = (err: unknown) =>
  err instanceof ApiFailure && err.status >= 400 && err.status < 500 && err.status !== 401;

export async function insertInBatches(
  client: Client,
  collectionPath: string,
  rows: CsvRow[],
  onProgress: (done: number) => void,
): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { inserted: 0, refused: [] };
  let done = 0;
  const separator = collectionPath.includes("?") ? "&" : "?";
  async function send(batch: CsvRow[]): Promise<void> {
    try {
      await client.call("POST", `${collectionPath}${separator}txsummary=false`, {
        body: batch.map((r) => r.object),
      });
      outcome.inserted += batch.length;
      done += batch.length;
      onProgress(done);
    } catch (err) {
      if (!isRowProblem(err)) throw err;
      const [first] = batch;
      if (first && batch.length === 1) {
        outcome.refused.push({ line: first.line, message: refusal(err) });
        done += 1;
        onProgress(done);
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await send(batch.slice(0, half));
      await send(batch.slice(half));
    }
  }
  try {
    for (const batch of batchesOf(rows, IMPORT_BATCH)) await send(batch);
  } catch (err) {
    outcome.stopped = err;
  }
  return outcome;
}
