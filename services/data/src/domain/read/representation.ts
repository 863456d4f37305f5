/**
 * Rows on the wire: resource attributes (aliases applied, hidden columns
 * dropped) and `@metadata` with href, checksum and links to child collections.
 */
import { printName, printString } from "../../query/index.ts";
import type { RowDocument } from "../../store/tenant-rows.ts";
import { keySegment, outputValue } from "../model/column-values.ts";
import type { ResourceModel, TableModel } from "../model/project-model.ts";
import { foreignKey, tableNamed } from "../model/table-model.ts";

export interface Addressing {
  /** `<origin>/rest` */
  restBase: string;
  account: string;
  project: string;
  version: string;
}

export type WireObject = Record<string, unknown> & { "@metadata"?: Record<string, unknown> };

/** The URL in the trailing `{"@metadata": {"next_batch": …}}` element of a page, if it has one. */
export function nextBatchOf(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const last: unknown = value[value.length - 1];
  if (typeof last !== "object" || last === null) return undefined;
  const meta = (last as WireObject)["@metadata"];
  return Object.keys(last).length === 1 && typeof meta?.next_batch === "string" ? meta.next_batch : undefined;
}

export function collectionHref(a: Addressing, resourceName: string): string {
  return `${a.restBase}/${encodeURIComponent(a.account)}/${encodeURIComponent(a.project)}/${encodeURIComponent(a.version)}/${resourceName}`;
}

export function objectHref(a: Addressing, resource: ResourceModel, doc: Record<string, unknown>): string {
  return `${collectionHref(a, resource.name)}/${keySegment(resource.table, doc)}`;
}

export function checksumOf(doc: RowDocument): string {
  return `R:${doc._ck}`;
}

/** A filter literal in the filter language: strings quoted with '' escapes. */
export function filterLiteral(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return printString(value);
  return String(value);
}

/** `column = value` in the filter language, the column quoted when it needs to be. */
export function equalsFilter(column: string, value: unknown): string {
  return `${printName(column)} = ${filterLiteral(value)}`;
}

function childLinks(a: Addressing, table: TableModel, doc: RowDocument, tables: Map<string, TableModel>) {
  return [...table.children.values()].map((rel) => {
    const childTable = tableNamed(tables, rel.childTable);
    const filter = foreignKey(rel)
      .map(({ child, parent }) => equalsFilter(child, doc[parent]))
      .join(" and ");
    return {
      rel: "children",
      role: rel.childrenName,
      href: `${collectionHref(a, childTable.name)}?filter=${encodeURIComponent(filter)}`,
    };
  });
}

export interface WireOptions {
  nometa: boolean;
  /** Columns the key may see (null = all). */
  visibleColumns: Set<string> | null;
  tables: Map<string, TableModel>;
}

export function toWire(
  a: Addressing,
  resource: ResourceModel,
  doc: RowDocument,
  options: WireOptions,
): WireObject {
  const out: WireObject = {};
  if (!options.nometa) {
    const meta: Record<string, unknown> = { href: objectHref(a, resource, doc), checksum: checksumOf(doc) };
    if (resource.isTable && resource.table.children.size > 0) {
      meta.links = childLinks(a, resource.table, doc, options.tables);
    }
    out["@metadata"] = meta;
  }
  for (const attr of resource.attributes) {
    if (options.visibleColumns && !options.visibleColumns.has(attr.column.name)) continue;
    out[attr.name] = outputValue(attr.column, doc[attr.column.name]);
  }
  return out;
}
