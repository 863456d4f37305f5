/** Bodies of the meta endpoints @license, @tables and @resources. */
import type { ResourceModel, TableModel } from "../domain/project-model.ts";
import { collectionHref } from "../domain/representation.ts";
import type { ProjectRequest } from "./project-request.ts";

/** What the original product's command-line client reads before it logs in. */
export const LICENSE = {
  company: "Tessera",
  license_type: "Tessera open platform",
  license_expiration: null,
  product: "Tessera",
  compatibility: "CA Live API Creator REST API",
};

/**
 * The data-source prefix the original product put before table names (`demo:customer`).
 * Tessera has one data source per project; resource URLs accept any prefix.
 */
export const DATA_SOURCE_PREFIX = "main";

/**
 * `prefix`, `entity` (list) and `primaryKeyColumns` (detail) are what `lac describe`
 * and `lac schema list` (liveapicreator-cli 5.x) print.
 */
export function describeTable(r: ProjectRequest, table: TableModel, detailed: boolean) {
  const base = {
    name: table.name,
    prefix: DATA_SOURCE_PREFIX,
    entity: table.name,
    "@metadata": { href: `${collectionHref(r.addressing, "@tables")}/${encodeURIComponent(table.name)}` },
  };
  if (!detailed) return base;
  return {
    ...base,
    columns: table.columnOrder.map((name) => {
      const c = table.columns.get(name)!;
      return {
        name,
        type: c.type,
        required: c.required,
        generated: c.generated,
        ...(c.default !== undefined ? { default: c.default } : {}),
      };
    }),
    primaryKey: { columns: table.key },
    primaryKeyColumns: table.key,
    parents: [...table.parents.values()].map((p) => ({
      name: p.role,
      parent_table: p.parentTable,
      child_columns: p.childColumns,
      parent_columns: p.parentColumns,
    })),
    children: [...table.children.values()].map((c) => ({
      name: c.childrenName,
      child_table: c.childTable,
      child_columns: c.childColumns,
      parent_columns: c.parentColumns,
    })),
  };
}

/** `resource_type` and `apiVersion` are what `lac describe resources` prints. */
export function describeResource(r: ProjectRequest, resource: ResourceModel) {
  return {
    name: resource.name,
    resource_type: "TableBased",
    apiVersion: r.addressing.version,
    table: resource.table.name,
    attributes: resource.attributes.map((a) => ({
      name: a.name,
      column: a.column.name,
      type: a.column.type,
    })),
    subresources: resource.subresources.map((s) => s.name),
    "@metadata": { href: collectionHref(r.addressing, resource.name) },
  };
}
