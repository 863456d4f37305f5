/** Rows of the data API: their attributes, metadata, and nested children. */
export interface RowMetadata {
  href?: string;
  checksum?: string;
  resource?: string;
  verb?: string;
  next_batch?: string;
  links?: { rel: string; role?: string; href: string }[];
}

export type Row = Record<string, unknown> & { "@metadata"?: RowMetadata };

export const metadataOf = (row: Row): RowMetadata => row["@metadata"] ?? {};

const isObject = (v: unknown): v is Row => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Which names hold nested child lists: those `known` (a resource's sub-resources), those
 * where any row holds a list of objects with `@metadata`, and — when nothing else tells —
 * those where every row holds an empty list (a child list with no children in this page;
 * one row's empty list never turns the others' children into a column).
 */
export function childNamesOf(rows: Row[], known: readonly string[] = []): Set<string> {
  const names = new Set(known);
  const all = new Set(rows.flatMap((r) => Object.keys(r)));
  for (const name of all) {
    if (name === "@metadata") continue;
    const values = rows.map((r) => r[name]);
    const nested = values.some((v) => Array.isArray(v) && v.some((x) => isObject(x) && "@metadata" in x));
    const allEmpty = values.every((v) => Array.isArray(v) && v.length === 0);
    if (nested || allEmpty) names.add(name);
  }
  return names;
}

/** Attribute names of the rows, in first-seen order (child lists are not attributes). */
export function columnsOf(rows: Row[], children: Set<string>): string[] {
  const seen = new Set<string>();
  for (const row of rows)
    for (const name of Object.keys(row)) if (name !== "@metadata" && !children.has(name)) seen.add(name);
  return [...seen];
}

/** A row's nested child lists, each as it came (the last element may be a `next_batch`). */
export function childListsOf(row: Row, children: Set<string>): [string, Row[]][] {
  return [...children].map((name): [string, Row[]] => {
    const list = row[name];
    return [name, Array.isArray(list) ? list.filter(isObject) : []];
  });
}

/**
 * A row's name for people: its path under the project version, each part decoded
 * (`/rest/acme/shop/v1/customer/A%204` → `customer / A 4`).
 */
export function rowName(path: string): string {
  const parts = path.replace(/\?.*$/s, "").split("/").filter(Boolean).slice(4);
  return parts
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    })
    .join(" / ");
}
