/**
 * The export's API versions: their resources (nested by `container_ident`) as
 * Tessera's custom resources, the project's event handlers as each version's
 * request and response events. A resource over a table keeps its name, its
 * attribute aliases (`ResourceAttributes`), its filter and sort (SQL, translated
 * by sql-predicates.ts) and its sub-resources, each joined to its container by
 * the relationship its `join_condition` (`"CustomerID" = [CustomerID]`: the
 * sub-resource's column = [the container's]) names. A JavaScript resource is
 * kept when its code needs nothing the sandbox lacks.
 */
import type {
  CustomResourceDefinition,
  EventDefinition,
  ResourceDefinition,
  VersionDefinition,
} from "../definition/project-definition.ts";
import { NameSpace } from "./import-names.ts";
import { exportPath, type ImportReport } from "./import-report.ts";
import { judgeCode } from "./lac-code.ts";
import type { LacEventHandler, LacProject, LacResource } from "./lac-export.ts";
import type { MappedSchema, MappedTable } from "./schema-mapping.ts";
import { sqlFilter, sqlOrder } from "./sql-predicates.ts";

/** Names LAC gave JavaScript resources and events that Tessera's scripts do not have (javascript.md). */
const LAC_SCRIPT_GLOBALS = [
  "req",
  "json",
  "res",
  "containingRow",
  "tableRow",
  "parameters",
  "resource",
  "responseEvent",
];

export interface MappedVersions {
  versions: Record<string, VersionDefinition>;
  usesLog: boolean;
}

interface Node {
  resource: LacResource;
  path: string;
  children: Node[];
}

export function mapVersions(project: LacProject, schema: MappedSchema, report: ImportReport): MappedVersions {
  const out: MappedVersions = { versions: {}, usesLog: false };
  const events = mapEvents(project.EventHandlers, report, out);
  const versionNames = new NameSpace();
  project.ApiVersions.forEach((version, vIndex) => {
    const name = versionNames.claim(version.name, "name");
    if (name !== version.name)
      report.add(exportPath("ApiVersions", vIndex, "name"), `version '${version.name}' is named '${name}'`);
    const nodes = new Map<number, Node>();
    version.Resources.forEach((resource, rIndex) => {
      nodes.set(resource.ident, {
        resource,
        path: exportPath("ApiVersions", vIndex, "Resources", rIndex),
        children: [],
      });
    });
    const roots: Node[] = [];
    for (const node of nodes.values()) {
      const container =
        node.resource.container_ident == null ? undefined : nodes.get(node.resource.container_ident);
      if (node.resource.container_ident == null) roots.push(node);
      else if (container) container.children.push(node);
      else
        report.add(
          node.path,
          `resource '${node.resource.name}': its container (${node.resource.container_ident}) is not in the version, so it is left out`,
        );
    }
    const resources: Record<string, CustomResourceDefinition> = {};
    const resourceNames = new NameSpace(schema.tables.keys());
    for (const root of roots) {
      const mapped = mapRoot(root, schema, report, out);
      if (!mapped) continue;
      const own = resourceNames.claim(root.resource.name, "name");
      if (own !== root.resource.name)
        report.add(
          root.path,
          `resource '${root.resource.name}' is named '${own}' (a table has its name, or it is not a Tessera name)`,
        );
      resources[own] = mapped;
    }
    const definition: VersionDefinition = { resources };
    if (events.length > 0) definition.events = events;
    out.versions[name] = definition;
  });
  return out;
}

function mapRoot(
  node: Node,
  schema: MappedSchema,
  report: ImportReport,
  out: MappedVersions,
): CustomResourceDefinition | undefined {
  const r = node.resource;
  if (r.code_text && r.code_text.trim() !== "" && r.resource_type_ident !== 1) {
    for (const child of node.children)
      report.add(
        child.path,
        `resource '${child.resource.name}' is nested in a JavaScript resource; Tessera's JavaScript resources have no sub-resources`,
      );
    const verdict = judgeCode(r.code_text, LAC_SCRIPT_GLOBALS);
    if (!verdict.ok) {
      report.add(node.path, `JavaScript resource '${r.name}': ${verdict.reason}`);
      return undefined;
    }
    if (verdict.usesLog) out.usesLog = true;
    return {
      type: "javascript",
      code: r.code_text,
      ...(r.description ? { description: r.description.slice(0, 2000) } : {}),
    };
  }
  return mapTableResource(node, undefined, schema, report);
}

function mapTableResource(
  node: Node,
  container: MappedTable | undefined,
  schema: MappedSchema,
  report: ImportReport,
): (ResourceDefinition & { via?: string }) | undefined {
  const r = node.resource;
  const table = r.table_name ? schema.table(r.table_name) : undefined;
  if (!table) {
    report.add(
      node.path,
      `resource '${r.name}': ${r.table_name ? `table '${r.table_name}' is not in the schema` : `resource type ${r.resource_type_ident} has no table`}, so it is left out`,
    );
    return undefined;
  }
  for (const field of ["attach_path", "custom_class", "filter_code", "serial_filter"] as const) {
    const value = r[field];
    if (typeof value === "string" && value.trim() !== "")
      report.add(`${node.path}.${field}`, `'${field}' has no counterpart in Tessera; left out`);
  }
  if (r.combined)
    report.add(
      `${node.path}.combined`,
      "a combined resource (attributes of the parent merged in) has no counterpart; the resource shows its own table's attributes",
    );
  const definition: ResourceDefinition & { via?: string } = { table: table.name };
  if (container) {
    const via = joinRelationship(r, table, container);
    if (typeof via !== "string" || via.startsWith("!")) {
      report.add(
        node.path,
        `sub-resource '${r.name}': ${typeof via === "string" ? via.slice(1) : "no join condition"}; it is left out`,
      );
      return undefined;
    }
    definition.via = via;
  }
  const attributes = new Map<string, string>();
  node.resource.ResourceAttributes.forEach((attribute, index) => {
    const where = `${node.path}.ResourceAttributes[${index}]`;
    if (attribute.formula && attribute.formula.trim() !== "") {
      report.add(
        where,
        `attribute '${attribute.name}' is computed (${attribute.formula}); Tessera's attributes are columns, so it is left out`,
      );
      return;
    }
    const column = attribute.column_name ? schema.column(table, attribute.column_name) : undefined;
    if (!column) {
      report.add(
        where,
        `attribute '${attribute.name}': '${table.source.name}' has no column '${attribute.column_name ?? ""}'`,
      );
      return;
    }
    if (attribute.format)
      report.add(
        `${where}.format`,
        `the format '${attribute.format}' is dropped: Tessera answers values as they are`,
      );
    attributes.set(new NameSpace(attributes.keys()).claim(attribute.name, "column"), column);
  });
  if (attributes.size > 0) {
    const shown = new Set(attributes.values());
    for (const key of table.definition.key) {
      if (shown.has(key)) continue;
      attributes.set(new NameSpace(attributes.keys()).claim(key, "column"), key);
      report.add(
        node.path,
        `resource '${r.name}' shows key column '${key}' too: Tessera resources show their table's key`,
      );
    }
    definition.attributes = Object.fromEntries(attributes);
  }
  const byAttribute = (name: string) => {
    const column = schema.column(table, name);
    if (!column) return undefined;
    if (attributes.size === 0) return column;
    return [...attributes].find(([, c]) => c === column)?.[0];
  };
  if (r.filter && r.filter.trim() !== "") {
    const filter = sqlFilter(r.filter, byAttribute);
    if (filter.ok) definition.filter = filter.text;
    else report.add(`${node.path}.filter`, `the filter is left out: ${filter.reason}`);
  }
  if (r.sorting && r.sorting.trim() !== "") {
    const order = sqlOrder(r.sorting, byAttribute);
    if (order.ok) definition.order = order.text;
    else report.add(`${node.path}.sorting`, `the sort is left out: ${order.reason}`);
  }
  const names = new NameSpace(
    attributes.size > 0 ? attributes.keys() : Object.keys(table.definition.columns),
  );
  const subresources: Record<string, ResourceDefinition & { via: string }> = {};
  for (const child of node.children) {
    const mapped = mapTableResource(child, table, schema, report);
    if (!mapped?.via) continue;
    const own = names.claim(child.resource.name, "name");
    if (own !== child.resource.name)
      report.add(child.path, `sub-resource '${child.resource.name}' is named '${own}'`);
    subresources[own] = { ...mapped, via: mapped.via };
  }
  if (Object.keys(subresources).length > 0) definition.subresources = subresources;
  return definition;
}

/**
 * The relationship a join condition names (`"CustomerID" = [CustomerID]`,
 * conditions joined by AND): the sub-resource's table a child of its container
 * (a list) or its parent (one object). A string starting with `!` says why none.
 */
function joinRelationship(r: LacResource, table: MappedTable, container: MappedTable): string {
  const text = r.join_condition ?? "";
  const pairs: [string, string][] = [];
  for (const part of text.split(/\s+and\s+/i)) {
    const m = /^\s*"?([^"=\s]+)"?\s*=\s*\[([^\]]+)\]\s*$/.exec(part);
    if (!m) return `!the join condition '${text}' is not of the form "column" = [container column] (AND …)`;
    pairs.push([m[1] as string, (m[2] as string).trim()]);
  }
  const same = (columns: Record<string, string>, own: MappedTable, other: MappedTable, flip: boolean) => {
    const wanted = pairs.map(([sub, cont]) => {
      const childColumn = flip ? cont : sub;
      const parentColumn = flip ? sub : cont;
      const childTable = flip ? own : table;
      const parentTable = flip ? table : other;
      return `${columnIn(childTable, childColumn)}=${columnIn(parentTable, parentColumn)}`;
    });
    const have = Object.entries(columns).map(([c, p]) => `${c}=${p}`);
    return wanted.length === have.length && wanted.every((w) => have.includes(w));
  };
  const collection = (r.is_collection ?? "Y").toUpperCase() !== "N";
  if (collection) {
    for (const [role, rel] of Object.entries(table.definition.parents ?? {})) {
      if (rel.table === container.name && same(rel.columns, container, container, false)) return role;
    }
  } else {
    for (const [role, rel] of Object.entries(container.definition.parents ?? {})) {
      if (rel.table !== table.name || !same(rel.columns, container, container, true)) continue;
      if (table.name === container.name)
        return `!'${role}' relates '${table.source.name}' to itself, and Tessera reads a table's own relationship in a sub-resource as its children, not its parent`;
      return role;
    }
  }
  return `!no relationship of the schema joins '${container.source.name}' and '${table.source.name}' on ${text} as ${collection ? "a list of children" : "a parent"}`;
}

function columnIn(table: MappedTable, name: string): string {
  const lower = name.toLowerCase();
  for (const [sqlName, column] of table.columns)
    if (sqlName === name || sqlName.toLowerCase() === lower) return column;
  return `?${name}`;
}

/** LAC's project-wide request (1) and response (2) events, as every version's events. */
function mapEvents(
  handlers: LacEventHandler[],
  report: ImportReport,
  out: MappedVersions,
): EventDefinition[] {
  const events: EventDefinition[] = [];
  for (const [index, handler] of handlers.entries()) {
    const where = exportPath("EventHandlers", index);
    const label = handler.name ?? `#${index + 1}`;
    const type =
      handler.eventtype_ident === 1 ? "request" : handler.eventtype_ident === 2 ? "response" : undefined;
    if (handler.active === false) {
      report.add(where, `event '${label}' is inactive in the export, so it is left out`);
      continue;
    }
    if (!type) {
      report.add(
        where,
        `event '${label}': event type ${handler.eventtype_ident} (not a request or response event) has no counterpart`,
      );
      continue;
    }
    if (!handler.code || handler.code.trim() === "") {
      report.add(where, `event '${label}' has no code`);
      continue;
    }
    if (handler.enabled_verbs || handler.resource_name_pattern) {
      report.add(
        where,
        `event '${label}': its verbs / resource pattern are not kept; Tessera's events run for every request of the version (the code can test request.method and request.resource)`,
      );
    }
    const verdict = judgeCode(handler.code, LAC_SCRIPT_GLOBALS);
    if (!verdict.ok) {
      report.add(where, `event '${label}': ${verdict.reason}`);
      continue;
    }
    if (verdict.usesLog) out.usesLog = true;
    events.push({ type, code: handler.code, ...(handler.name ? { name: handler.name.slice(0, 200) } : {}) });
  }
  return events.slice(0, 50);
}
