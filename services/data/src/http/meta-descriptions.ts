/** Bodies of the meta endpoints @license, @tables and @resources. */
import { ACCESS_LEVELS } from "../domain/definition/project-definition.ts";
import type { ResourceModel, TableModel } from "../domain/model/project-model.ts";
import type { JavaScriptResourceModel } from "../domain/model/script-model.ts";
import { indexServes } from "../domain/model/table-indexes.ts";
import { columnNamed } from "../domain/model/table-model.ts";
import { collectionHref } from "../domain/read/representation.ts";
import type { AccessView } from "./access-view.ts";
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
 * The columns of `table` the caller may see — those of any access its roles grant
 * (`null`: every column) — or `undefined` when its roles grant no access to the table.
 */
export function visibleColumns(view: AccessView, table: TableModel): ReadonlySet<string> | null | undefined {
  const granted = ACCESS_LEVELS.map((level) => view(table, level)).filter((p) => p !== null);
  if (granted.length === 0) return undefined;
  if (granted.some((p) => p.columns === null)) return null;
  return new Set(granted.flatMap((p) => [...(p.columns ?? [])]));
}

/** Rule types that compute a column's value: a client cannot set such a column. */
const DERIVING_RULES = new Set(["sum", "count", "min", "max", "formula", "parentCopy"]);

/** The type of the rule that computes `column` of `table`, if one does. */
export function derivedBy(r: ProjectRequest, table: string, column: string): string | undefined {
  const rule = r.project.rules.find(
    (x) => x.table === table && DERIVING_RULES.has(x.type) && "column" in x && x.column === column,
  );
  return rule?.type;
}

/**
 * `prefix`, `entity` (list) and `primaryKeyColumns` (detail) are what `lac describe`
 * and `lac schema list` (liveapicreator-cli 5.x) print. The detail shows the columns
 * the caller may see, and parents and children among the tables it may see.
 */
export function describeTable(r: ProjectRequest, table: TableModel, detailed: boolean, view?: AccessView) {
  const base = {
    name: table.name,
    prefix: DATA_SOURCE_PREFIX,
    entity: table.name,
    "@metadata": { href: `${collectionHref(r.addressing, "@tables")}/${encodeURIComponent(table.name)}` },
  };
  if (!detailed) return base;
  const columns = view ? visibleColumns(view, table) : null;
  const visibleTable = (name: string) => {
    const other = r.project.tables.get(name);
    return !view || (other !== undefined && visibleColumns(view, other) !== undefined);
  };
  return {
    ...base,
    columns: table.columnOrder
      .filter((name) => !columns || columns.has(name))
      .map((name) => {
        const c = columnNamed(table, name);
        const derived = derivedBy(r, table.name, name);
        return {
          name,
          type: c.type,
          required: c.required,
          generated: c.generated,
          ...(c.default !== undefined ? { default: c.default } : {}),
          ...(derived ? { derived } : {}),
        };
      }),
    primaryKey: { columns: table.key },
    primaryKeyColumns: table.key,
    indexes: table.indexes
      .filter((index) => !columns || index.columns.every((c) => columns.has(c)))
      .map((index) => {
        const { name, columns, unique, origin } = index;
        return { name, columns, unique, origin, serves: indexServes(index, table.key) };
      }),
    parents: [...table.parents.values()]
      .filter((p) => visibleTable(p.parentTable))
      .map((p) => ({
        name: p.role,
        parent_table: p.parentTable,
        child_columns: p.childColumns,
        parent_columns: p.parentColumns,
      })),
    children: [...table.children.values()]
      .filter((c) => visibleTable(c.childTable))
      .map((c) => ({
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
    attributes: resource.attributes.map((a) => {
      const derived = derivedBy(r, resource.table.name, a.column.name);
      return {
        name: a.name,
        column: a.column.name,
        type: a.column.type,
        required: a.column.required,
        key: resource.table.key.includes(a.column.name),
        ...(derived ? { derived } : {}),
      };
    }),
    subresources: resource.subresources.map((s) => s.name),
    "@metadata": { href: collectionHref(r.addressing, resource.name) },
  };
}

/** A resource computed by JavaScript: no table, no attributes (its answer is whatever the code makes). */
export function describeJavaScriptResource(r: ProjectRequest, resource: JavaScriptResourceModel) {
  return {
    name: resource.name,
    resource_type: "JavaScript",
    apiVersion: r.addressing.version,
    ...(resource.description !== undefined ? { description: resource.description } : {}),
    "@metadata": { href: collectionHref(r.addressing, resource.name) },
  };
}
