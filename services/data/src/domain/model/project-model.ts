/**
 * Compiles a parsed project definition into the model the request path uses
 * (tables with relationships, resources per API version, roles, and the
 * compiled rules), checking every cross-reference on the way. Problems carry
 * JSON paths. A reference to a part that was lost (see definition-salvage.ts)
 * is not reported: that part's own problem already was.
 */
import { present } from "../../../../../shared/present.ts";
import type { TenantStorage } from "../../store/storage-names.ts";
import { LostParts } from "../definition/definition-salvage.ts";
import { type Problem, problemList, type Report } from "../definition/problems.ts";
import type {
  AccessLevel,
  ColumnType,
  ProjectDefinition,
  ResourceDefinition,
  RoleDefinition,
  RuleDefinition,
  VersionDefinition,
  VersionResponseFormat,
} from "../definition/project-definition.ts";
import { type AuthenticationModel, compileAuthentication } from "./authentication-model.ts";
import { checkRuleLibraries } from "./rule-library-check.ts";
import { compileLogic, type LogicModel } from "./rule-model.ts";
import { compileVersionScripts, isJavaScriptResource, type VersionScripts } from "./script-model.ts";
import { type ColumnModel, compileTables, type Relationship, type TableModel } from "./table-model.ts";

/** The tables' part of the model (table-model.ts), named with the rest of it. */
export type { ColumnModel, Relationship, TableModel } from "./table-model.ts";

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
  via?: { relationship: Relationship; kind: "children" | "parent"; container: ResourceModel };
  subresources: ResourceModel[];
  isTable: boolean;
  filter?: string;
  order?: string;
}

export interface VersionModel {
  name: string;
  /** Tables and table-based custom resources (with their nested resources). */
  resources: Map<string, ResourceModel>;
  /** JavaScript resources and request/response events (docs/javascript.md). */
  scripts: VersionScripts;
  /** GET answers' format when a request names none. */
  defaultResponseFormat: VersionResponseFormat;
  /** The root element of XML answers. */
  xmlRootElement: string;
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
  /** Where its rows live (recorded names: a re-created project never sees an old one's rows). */
  storage: TenantStorage;
  definition: ProjectDefinition;
  /** The definition's `authentication`, checked: one kind per provider, with that provider's fields. */
  authentication: AuthenticationModel;
  tables: Map<string, TableModel>;
  versions: Map<string, VersionModel>;
  roles: Map<string, RoleModel>;
  rules: RuleDefinition[];
  /** The rules, compiled for the logic engine (their code parsed once, here). */
  logic: LogicModel;
}

/**
 * Optional check of filter texts (row filters, resource filters): returns a
 * problem message or null. `lost`: attribute names that were lost (a filter
 * naming one is only checked to parse).
 */
export type FilterChecker = (
  text: string,
  attributes: { name: string; type: ColumnType }[],
  lost?: ReadonlySet<string>,
) => string | null;

/**
 * The sandbox program keys of one incarnation of a project all start with
 * this: a project deleted and created again gets new programs (none of its
 * predecessor's state), and the deleted one's programs are dropped together.
 */
/** The resource of a table the model itself names (a relationship's): every table has one. */
export function resourceOfTable(version: VersionModel, table: string): ResourceModel {
  return present(version.resources.get(table), `the resource of '${table}'`);
}

export function programKeyPrefix(project: Pick<ProjectModel, "account" | "name" | "uid">): string {
  return `${project.account}/${project.name}@${project.uid}/`;
}

/** The key of one of a project's sandbox programs (`part`: `auth`, `rules`, `<version>/scripts`). */
export function programKey(project: Pick<ProjectModel, "account" | "name" | "uid">, part: string): string {
  return `${programKeyPrefix(project)}${part}`;
}

/** What a compiled model is of: the project's identity and where its rows live. */
export type ProjectIdentity = Pick<ProjectModel, "account" | "name" | "uid" | "revision" | "storage">;

/** Identity of a model compiled only to be checked: it is never served, so it has no storage. */
export const UNSERVED_IDENTITY: ProjectIdentity = {
  account: "",
  name: "",
  uid: "",
  revision: 0,
  storage: { database: "", collectionPrefix: "" },
};

/**
 * `lost`: parts of the definition as sent that did not parse; references to
 * them are taken as already reported.
 */
export function compileProject(
  identity: ProjectIdentity,
  definition: ProjectDefinition,
  checkFilter?: FilterChecker,
  lost: LostParts = new LostParts(definition),
): { ok: true; model: ProjectModel } | { ok: false; problems: Problem[] } {
  const { problems, report } = problemList();
  const context: Context = { lost, report, checkFilter };

  const tables = compileTables(definition, context);
  const versions = new Map<string, VersionModel>();
  for (const [versionName, version] of Object.entries(definition.apiVersions)) {
    versions.set(versionName, compileVersion(versionName, version, definition, tables, context));
  }
  if (versions.size === 0 && !lost.hasWithin(["apiVersions"]))
    report(["apiVersions"], "at least one API version is required");
  const roles = compileRoles(definition.roles, tables, context);
  const { logic, problems: ruleProblems } = compileLogic(tables, definition.rules, lost);
  problems.push(...ruleProblems);
  checkRuleLibraries(definition.libraries, definition.rules.length > 0, report);
  const authentication = compileAuthentication(definition, context);

  if (problems.length > 0 || !authentication) return { ok: false, problems };
  return {
    ok: true,
    model: {
      ...identity,
      definition,
      authentication,
      tables,
      versions,
      roles,
      rules: definition.rules,
      logic,
    },
  };
}

interface Context {
  lost: LostParts;
  report: Report;
  checkFilter: FilterChecker | undefined;
}

/** Checks a filter text over attributes; `lost`: attribute names whose columns were lost. */
function checkFilterOver(
  text: string | undefined,
  attributes: { name: string; type: ColumnType }[],
  lost: ReadonlySet<string>,
  path: PropertyKey[],
  { report, checkFilter }: Context,
): void {
  if (!text || !checkFilter) return;
  const problem = checkFilter(text, attributes, lost);
  if (problem) report(path, problem);
}

function buildResource(
  fullName: string,
  table: TableModel,
  attributes: Record<string, string> | undefined,
  path: PropertyKey[],
  { lost, report }: Context,
): ResourceModel {
  const attrs: AttributeModel[] = [];
  if (attributes) {
    for (const [alias, col] of Object.entries(attributes)) {
      const column = table.columns.get(col);
      if (column) attrs.push({ name: alias, column });
      else if (!lost.has(["tables", table.name, "columns", col]))
        report([...path, "attributes", alias], `'${col}' is not a column of '${table.name}'`);
    }
    for (const k of table.key) {
      if (!attrs.some((a) => a.column.name === k) && !lost.has(["tables", table.name, "columns", k])) {
        report([...path, "attributes"], `must include the key column '${k}' of '${table.name}'`);
      }
    }
  } else {
    for (const column of table.columns.values()) attrs.push({ name: column.name, column });
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
  version: VersionDefinition,
  definition: ProjectDefinition,
  tables: Map<string, TableModel>,
  context: Context,
): VersionModel {
  const { lost, report } = context;
  const map = new Map<string, ResourceModel>();
  for (const table of tables.values()) {
    const r = buildResource(table.name, table, undefined, [], context);
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
      if (!lost.has(["tables", def.table])) report([...path, "table"], `no table '${def.table}'`);
      return undefined;
    }
    const resource = buildResource(fullName, table, def.attributes, path, context);
    resource.isTable = false;
    resource.filter = def.filter;
    resource.order = def.order;
    const lostAttributes = Object.entries(def.attributes ?? {})
      .filter(([, column]) => lost.has(["tables", table.name, "columns", column]))
      .map(([alias]) => alias);
    checkFilterOver(
      def.filter,
      resource.attributes.map((a) => ({ name: a.name, type: a.column.type })),
      new Set(def.attributes ? lostAttributes : lost.namesWithin(["tables", table.name, "columns"])),
      [...path, "filter"],
      context,
    );
    if (container && def.via) {
      const asChild = table.parents.get(def.via);
      const asParent = container.table.parents.get(def.via);
      if (asChild && asChild.parentTable === container.table.name) {
        resource.via = { relationship: asChild, kind: "children", container };
      } else if (asParent && asParent.parentTable === table.name) {
        resource.via = { relationship: asParent, kind: "parent", container };
      } else if (
        !lost.has(["tables", table.name, "parents", def.via]) &&
        !lost.has(["tables", container.table.name, "parents", def.via])
      ) {
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
  for (const [resourceName, def] of Object.entries(version.resources)) {
    if (isJavaScriptResource(def)) continue;
    addResource(resourceName, def, undefined, ["apiVersions", versionName, "resources", resourceName]);
  }
  const scripts = compileVersionScripts(versionName, version, definition, {
    ...context,
    takenNames: new Set(map.keys()),
  });
  return {
    name: versionName,
    resources: map,
    scripts,
    defaultResponseFormat: version.defaultResponseFormat ?? "json",
    xmlRootElement: version.xmlRootElement ?? "response",
  };
}

function compileRoles(
  roles: Record<string, RoleDefinition>,
  tables: Map<string, TableModel>,
  context: Context,
): Map<string, RoleModel> {
  const { lost, report } = context;
  const result = new Map<string, RoleModel>();
  for (const [roleName, role] of Object.entries(roles)) {
    const access = new Map<string, RoleTableAccess>();
    for (const [tableName, t] of Object.entries(role.tables)) {
      const path = ["roles", roleName, "tables", tableName];
      const table = tables.get(tableName);
      if (tableName !== "*" && !table && !lost.has(["tables", tableName]))
        report(path, `no table '${tableName}'`);
      if (tableName === "*" && (t.rowFilter || t.columns)) {
        report(path, "rowFilter and columns can only be set for a named table");
      }
      if (table) {
        t.columns?.forEach((c, i) => {
          if (!table.columns.has(c) && !lost.has(["tables", tableName, "columns", c]))
            report([...path, "columns", i], `'${c}' is not a column of '${tableName}'`);
        });
        for (const k of table.key) {
          if (t.columns && !t.columns.includes(k) && !lost.has(["tables", tableName, "columns", k])) {
            report([...path, "columns"], `must include the key column '${k}'`);
          }
        }
        checkFilterOver(
          t.rowFilter,
          [...table.columns.values()].map((c) => ({ name: c.name, type: c.type })),
          new Set(lost.namesWithin(["tables", tableName, "columns"])),
          [...path, "rowFilter"],
          context,
        );
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
