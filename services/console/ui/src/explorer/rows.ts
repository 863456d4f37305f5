/** Rows of the data API: their attributes, metadata, and nested children. */
export interface RowMetadata {
  href?: string;
  checksum?: string;
  resource?: string;
  verb?: string;
  links?: { rel: string; role?: string; href: string }[];
}

export type Row = Record<string, unknown> & { "@metadata"?: RowMetadata };

export const metadataOf = (row: Row): RowMetadata => row["@metadata"] ?? {};

const isRowList = (v: unknown): v is Row[] =>
  Array.isArray(v) && v.every((x) => typeof x === "object" && x !== null && !Array.isArray(x));

/** Attribute names of the rows, in first-seen order (nested lists are children, not attributes). */
export function columnsOf(rows: Row[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) {
    for (const [name, value] of Object.entries(row)) {
      if (name !== "@metadata" && !(isRowList(value) && value.length > 0 && "@metadata" in value[0]!))
        seen.add(name);
    }
  }
  return [...seen];
}

/** Nested child lists of a row (a custom resource's sub-resources). */
export function childListsOf(row: Row): [string, Row[]][] {
  return Object.entries(row).filter(
    (e): e is [string, Row[]] =>
      e[0] !== "@metadata" && isRowList(e[1]) && e[1].some((x) => "@metadata" in x),
  );
}
