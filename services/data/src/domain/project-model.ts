/**
 * Compiles a parsed project definition into the model the request path uses
 * (tables with relationships, resources per API version, roles), checking the
 * cross-references on the way. Problems carry JSON paths.
 */
import type {
  AccessLevel,
  ColumnDefinition,
  ColumnType,
  Problem,
  ProjectDefinition,
  ResourceDefinition,
  RoleDefinition,
  RuleDefinition,
} from "./project-definition.ts";
import { jsonPath } from "./project-definition.ts";

export interface ColumnModel {
  name: string;
  type: ColumnType;
  required: boolean;
  generated: boolean;
  default: unknown;
  maxLength?: number;
}

/** A child table's foreign key to a parent table. */
export interface Relationship {
  /** Role name in the child (`row.<role>` is the parent). */
  role: string;
  /** Name of the child list in the parent. */
  childrenName: string;
  childTable: string;
  parentTable: string;
  childColumns: string[];
  parentColumns: string[];
}

export interface TableModel {
  name: string;
  key: string[];
  columns: Map<string, ColumnModel>;
  columnOrder: string[];
  parents: Map<string, Relationship>;
  children: Map<string, Relationship>;
  generatedColumn: string | undefined;
}

export interface AttributeModel {
  /** Name on the wire. */
  name: string;
  column: ColumnModel;
}

export interface ResourceModel {
  /** Full name, dotted for nested resources (`Customers.Orders`). */
  name: string;
  table: TableModel;
  attributes: AttributeModel[];
  attributeByName: Map<string, AttributeModel>;
  attributeByColumn: Map<string, AttributeModel>;
  /** How this resource hangs under its container (absent at the top). */
  via?: { relationship: Relationship; kind: "children" | "parent" };
  subresources: ResourceModel[];
  isTable: boolean;
  filter?: string;
  order?: string;
}

export interface VersionModel {
  name: string;
  resources: Map<string, ResourceModel>;
}

export interface RoleTableAccess {
  access: Set<AccessLevel>;
  rowFilter?: string;
  columns?: Set<string>;
}

export interface RoleModel {
  name: string;
  tables: Map<string, RoleTableAccess>;
}

export interface ProjectModel {
  account: string;
  name: string;
  /** Incarnation id: keys carry it, so a re-created project does not honour old keys. */
  uid: string;
  revision: number;
  definition: ProjectDefinition;
  tables: Map<string, TableModel>;
  versions: Map<string, VersionModel>;
  roles: Map<string, RoleModel>;
  rules: RuleDefinition[];
}

/** Optional check of filter texts (row filters, resource filters): returns a problem message or null. */
export type FilterChecker = (text: string, attributes: { name: string; type: ColumnType }[]) => string | null;

export function compileProject(
  identity: { account: string; name: string; uid: string; revision: number },
  definition: ProjectDefinition,
  checkFilter?: FilterChecker,
): { ok: true; model: ProjectModel } | { ok: false; problems: Problem[] } {
  const problems: Problem[] = [];
  const report = (path: PropertyKey[], message: string) => problems.push({ path: jsonPath(path), message });

  const tables = compileTables(definition, report);
  const versions = new Map<string, VersionModel>();
  for (const [versionName, version] of Object.entries(definition.apiVersions)) {
    versions.set(versionName, compileVersion(versionName, version.resources, tables, report, checkFilter));
  }
  if (versions.size === 0) report(["apiVersions"], "at least one API version is required");
  const roles = compileRoles(definition.roles, tables, report, checkFilter);
  checkRules(definition.rules, tables, report);
  checkAuthentication(definition, report);

  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    model: { ...identity, definition, tables, versions, roles, rules: definition.rules },
  };
}

type Report = (path: PropertyKey[], message: string) => void;

function columnModel(name: string, c: ColumnDefinition): ColumnModel {
  return {
    name,
    type: c.type,
    required: c.required ?? false,
    generated: c.generated ?? false,
    default: c.default,
    maxLength: c.maxLength,
  };
}

function compileTables(definition: ProjectDefinition, report: Report): Map<string, TableModel> {
  const tables = new Map<string, TableModel>();
  for (const [tableName, t] of Object.entries(definition.tables)) {
    const columns = new Map(Object.entries(t.columns).map(([n, c]) => [n, columnModel(n, c)]));
    const generated = [...columns.values()].filter((c) => c.generated);
    for (const c of generated) {
      if (c.type !== "integer")
        report(
          ["tables", tableName, "columns", c.name, "generated"],
          "only integer columns can be generated",
        );
    }
    if (generated.length > 1) report(["tables", tableName, "columns"], "at most one column can be generated");
    t.key.forEach((k, i) => {
      const column = columns.get(k);
      if (!column) report(["tables", tableName, "key", i], `key column '${k}' is not a column of the table`);
      else if (column.type === "json")
        report(["tables", tableName, "key", i], "a json column cannot be part of the key");
    });
    if (new Set(t.key).size !== t.key.length)
      report(["tables", tableName, "key"], "key columns must be distinct");
    tables.set(tableName, {
      name: tableName,
      key: t.key,
      columns,
      columnOrder: Object.keys(t.columns),
      parents: new Map(),
      children: new Map(),
      generatedColumn: generated[0]?.name,
    });
  }
  for (const [tableName, t] of Object.entries(definition.tables)) {
    const child = tables.get(tableName)!;
    for (const [role, p] of Object.entries(t.parents ?? {})) {
      const path = ["tables", tableName, "parents", role];
      const parent = tables.get(p.table);
      if (!parent) {
        report([...path, "table"], `no table '${p.table}'`);
        continue;
      }
      const childColumns = Object.keys(p.columns);
      const parentColumns = Object.values(p.columns);
      childColumns.forEach((c, i) => {
        const cc = child.columns.get(c);
        const pc = parent.columns.get(parentColumns[i]!);
        if (!cc) report([...path, "columns", c], `'${c}' is not a column of '${tableName}'`);
        if (!pc) report([...path, "columns", c], `'${parentColumns[i]}' is not a column of '${p.table}'`);
        if (cc && pc && cc.type !== pc.type) {
          report(
            [...path, "columns", c],
            `type ${cc.type} does not match the parent column's type ${pc.type}`,
          );
        }
      });
      if (parentColumns.join("\0") !== parent.key.join("\0")) {
        report(
          [...path, "columns"],
          `must map onto the key of '${p.table}' (${parent.key.join(", ")}) in order`,
        );
      }
      if (child.columns.has(role))
        report(path, `role name '${role}' clashes with a column of '${tableName}'`);
      const childrenName = p.children ?? `${tableName}List`;
      if (parent.children.has(childrenName) || parent.columns.has(childrenName)) {
        report([...path, "children"], `'${childrenName}' is already used in '${p.table}'`);
      }
      const rel: Relationship = {
        role,
        childrenName,
        childTable: tableName,
        parentTable: p.table,
        childColumns,
        parentColumns,
      };
      child.parents.set(role, rel);
      parent.children.set(childrenName, rel);
    }
  }
  return tables;
}

function buildResource(
  fullName: string,
  table: TableModel,
  attributes: Record<string, string> | undefined,
  path: PropertyKey[],
  report: Report,
): ResourceModel {
  const attrs: AttributeModel[] = [];
  if (attributes) {
    for (const [alias, col] of Object.entries(attributes)) {
      const column = table.columns.get(col);
      if (!column) report([...path, "attributes", alias], `'${col}' is not a column of '${table.name}'`);
      else attrs.push({ name: alias, column });
    }
    for (const k of table.key) {
      if (!attrs.some((a) => a.column.name === k)) {
        report([...path, "attributes"], `must include the key column '${k}' of '${table.name}'`);
      }
    }
  } else {
    for (const c of table.columnOrder) attrs.push({ name: c, column: table.columns.get(c)! });
  }
  return {
    name: fullName,
    table,
    attributes: attrs,
    attributeByName: new Map(attrs.map((a) => [a.name, a])),
    attributeByColumn: new Map(attrs.map((a) => [a.column.name, a])),
    subresources: [],
    isTable: attributes === undefined && !fullName.includes("."),
  };
}

function compileVersion(
  versionName: string,
  resources: Record<string, ResourceDefinition>,
  tables: Map<string, TableModel>,
  report: Report,
  checkFilter?: FilterChecker,
): VersionModel {
  const map = new Map<string, ResourceModel>();
  for (const table of tables.values()) {
    const r = buildResource(table.name, table, undefined, [], report);
    r.isTable = true;
    map.set(table.name, r);
  }
  const addResource = (
    fullName: string,
    def: ResourceDefinition & { via?: string },
    container: ResourceModel | undefined,
    path: PropertyKey[],
  ): ResourceModel | undefined => {
    const table = tables.get(def.table);
    if (!table) {
      report([...path, "table"], `no table '${def.table}'`);
      return undefined;
    }
    const resource = buildResource(fullName, table, def.attributes, path, report);
    resource.isTable = false;
    resource.filter = def.filter;
    resource.order = def.order;
    for (const text of [def.filter, def.order].filter((x): x is string => !!x)) {
      if (text === def.filter && checkFilter) {
        const problem = checkFilter(
          text,
          resource.attributes.map((a) => ({ name: a.name, type: a.column.type })),
        );
        if (problem) report([...path, "filter"], problem);
      }
    }
    if (container && def.via) {
      const asChild = table.parents.get(def.via);
      const asParent = container.table.parents.get(def.via);
      if (asChild && asChild.parentTable === container.table.name) {
        resource.via = { relationship: asChild, kind: "children" };
      } else if (asParent && asParent.parentTable === table.name) {
        resource.via = { relationship: asParent, kind: "parent" };
      } else {
        report(
          [...path, "via"],
          `'${def.via}' is not a relationship between '${container.table.name}' and '${table.name}'`,
        );
      }
    }
    if (map.has(fullName))
      report(path, `resource name '${fullName}' is already used (tables are resources too)`);
    map.set(fullName, resource);
    for (const [subName, sub] of Object.entries(def.subresources ?? {})) {
      if (resource.attributeByName.has(subName)) {
        report([...path, "subresources", subName], `'${subName}' clashes with an attribute`);
      }
      const child = addResource(`${fullName}.${subName}`, sub, resource, [...path, "subresources", subName]);
      if (child) resource.subresources.push(child);
    }
    return resource;
  };
  for (const [resourceName, def] of Object.entries(resources)) {
    addResource(resourceName, def, undefined, ["apiVersions", versionName, "resources", resourceName]);
  }
  return { name: versionName, resources: map };
}

function compileRoles(
  roles: Record<string, RoleDefinition>,
  tables: Map<string, TableModel>,
  report: Report,
  checkFilter?: FilterChecker,
): Map<string, RoleModel> {
  const result = new Map<string, RoleModel>();
  for (const [roleName, role] of Object.entries(roles)) {
    const access = new Map<string, RoleTableAccess>();
    for (const [tableName, t] of Object.entries(role.tables)) {
      const path = ["roles", roleName, "tables", tableName];
      const table = tables.get(tableName);
      if (tableName !== "*" && !table) report(path, `no table '${tableName}'`);
      if (tableName === "*" && (t.rowFilter || t.columns)) {
        report(path, "rowFilter and columns can only be set for a named table");
      }
      if (table) {
        t.columns?.forEach((c, i) => {
          if (!table.columns.has(c))
            report([...path, "columns", i], `'${c}' is not a column of '${tableName}'`);
        });
        for (const k of table.key) {
          if (t.columns && !t.columns.includes(k)) {
            report([...path, "columns"], `must include the key column '${k}'`);
          }
        }
        if (t.rowFilter && checkFilter) {
          const problem = checkFilter(
            t.rowFilter,
            [...table.columns.values()].map((c) => ({ name: c.name, type: c.type })),
          );
          if (problem) report([...path, "rowFilter"], problem);
        }
      }
      access.set(tableName, {
        access: new Set(t.access),
        rowFilter: t.rowFilter,
        columns: t.columns ? new Set(t.columns) : undefined,
      });
    }
    result.set(roleName, { name: roleName, tables: access });
  }
  return result;
}

function checkRules(rules: RuleDefinition[], tables: Map<string, TableModel>, report: Report): void {
  rules.forEach((rule, i) => {
    const path = ["rules", i];
    const table = tables.get(rule.table);
    if (!table) {
      report([...path, "table"], `no table '${rule.table}'`);
      return;
    }
    const needColumn = ["sum", "count", "min", "max", "formula", "parentCopy"].includes(rule.type);
    if (needColumn) {
      if (!rule.column) report(path, `a ${rule.type} rule needs 'column'`);
      else if (!table.columns.has(rule.column))
        report([...path, "column"], `'${rule.column}' is not a column of '${rule.table}'`);
    }
    if (["sum", "count", "min", "max"].includes(rule.type)) {
      const rel = rule.children ? table.children.get(rule.children) : undefined;
      if (!rel)
        report([...path, "children"], `'${rule.children ?? ""}' is not a child list of '${rule.table}'`);
      else if (rule.type !== "count") {
        const child = tables.get(rel.childTable)!;
        if (!rule.of || !child.columns.has(rule.of)) {
          report([...path, "of"], `'${rule.of ?? ""}' is not a column of '${rel.childTable}'`);
        }
      }
    }
    if (["formula", "validation", "commitValidation"].includes(rule.type) && !rule.expression) {
      report(path, `a ${rule.type} rule needs 'expression'`);
    }
    if (["earlyEvent", "event", "commitEvent"].includes(rule.type) && !rule.code) {
      report(path, `a ${rule.type} rule needs 'code'`);
    }
    if (rule.type === "parentCopy") {
      const rel = rule.parent ? table.parents.get(rule.parent) : undefined;
      if (!rel) report([...path, "parent"], `'${rule.parent ?? ""}' is not a parent role of '${rule.table}'`);
      else if (!rule.from || !tables.get(rel.parentTable)!.columns.has(rule.from)) {
        report([...path, "from"], `'${rule.from ?? ""}' is not a column of '${rel.parentTable}'`);
      }
    }
    if (rule.type === "managedParent") {
      const rel = rule.parent ? table.parents.get(rule.parent) : undefined;
      if (!rel) report([...path, "parent"], `'${rule.parent ?? ""}' is not a parent role of '${rule.table}'`);
    }
  });
}

function checkAuthentication(definition: ProjectDefinition, report: Report): void {
  const auth = definition.authentication;
  if (auth.provider !== "custom") return;
  if (!auth.library) report(["authentication", "library"], "a custom provider needs 'library'");
  else if (!definition.libraries[auth.library]) {
    report(["authentication", "library"], `no library '${auth.library}' in 'libraries'`);
  }
  if (!auth.createFunction)
    report(["authentication", "createFunction"], "a custom provider needs 'createFunction'");
}
