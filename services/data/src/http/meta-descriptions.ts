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

export function describeTable(r: ProjectRequest, table: TableModel, detailed: boolean) {
  const base = {
    name: table.name,
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

export function describeResource(r: ProjectRequest, resource: ResourceModel) {
  return {
    name: resource.name,
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
