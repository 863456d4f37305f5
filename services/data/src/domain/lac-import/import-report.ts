/**
 * What a Live API Creator import could not carry over as it was: each entry names
 * where it came from (a JSON path into the export, `ddl:<line>` for a statement
 * of the schema, `data.<table>[<row>]` for a row) and why. The dry run answers
 * the list; the importer keeps everything else.
 */
import { jsonPath } from "../definition/problems.ts";

export interface Unmapped {
  /** Where in the input: `$.Rules[3]`, `ddl:12`, `data.Customers[4]`. */
  path: string;
  reason: string;
}

export class ImportReport {
  readonly unmapped: Unmapped[] = [];

  add(path: string, reason: string): void {
    this.unmapped.push({ path, reason });
  }
}

/** A JSON path into the export, `$` and the keys: `exportPath("Rules", 3, "rule_text2")` → `$.Rules[3].rule_text2`. */
export function exportPath(...parts: (string | number)[]): string {
  return jsonPath(parts);
}
