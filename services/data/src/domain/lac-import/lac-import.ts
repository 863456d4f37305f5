/**
 * A Live API Creator project export and its database's DDL, as a Tessera
 * project definition plus the users and API keys to create with it, and the
 * list of everything that did not map (import-report.ts). Pure: it reads and
 * answers, and stores nothing; the admin route applies what the administrator
 * confirms (http/admin/lac-import-routes.ts).
 *
 * The definition goes through the one definition check every PUT uses
 * (given as `check`); a part the check refuses (a rule reading an attribute
 * the schema does not have, say) is set aside and reported with the check's
 * message, so the answer is always a definition Tessera accepts.
 */
import { errors } from "../../../../../shared/errors.ts";
import type { Problem, ProjectDefinition, RoleDefinition } from "../definition/project-definition.ts";
import { type DataInput, readDataRows, type TableRows } from "./data-rows.ts";
import { exportPath, ImportReport, type Unmapped } from "./import-report.ts";
import { LAC_LOG_CODE, LAC_LOG_LIBRARY } from "./lac-code.ts";
import { KNOWN_EXPORT_VERSIONS, type LacProject, lacProjectSchema, READ_SECTIONS } from "./lac-export.ts";
import { mapOptions } from "./option-mapping.ts";
import { mapVersions } from "./resource-mapping.ts";
import { mapRules } from "./rule-mapping.ts";
import { mapSchema } from "./schema-mapping.ts";
import { type ImportedKey, type ImportedUser, mapKeys, mapRoles, mapUsers } from "./security-mapping.ts";
import type { SqlDialect } from "./sql-ast.ts";
import { readSchema } from "./sql-schema.ts";

export interface LacImportInput {
  /** `lacadmin project export` JSON: the project object, or an array holding it. */
  export: unknown;
  /** The database's DDL. */
  ddl: string;
  dialect: SqlDialect;
  keepKeyValues: boolean;
  now: number;
  /** Rows of the old database to load (optional). */
  data?: DataInput;
}

export interface LacImport {
  definition: ProjectDefinition;
  users: ImportedUser[];
  keys: ImportedKey[];
  unmapped: Unmapped[];
  /** The rows to load, tables parents first (none without `data`). */
  rows: TableRows;
  /** The export's project name and URL name, for the record. */
  project: { name: string | null; urlName: string | null };
}

/** The definition check every PUT makes (domain/admin/project-changes.ts): its problems, none when accepted. */
export type DefinitionCheck = (definition: unknown) => Problem[];

export function readLacExport(input: unknown): LacProject {
  const project = Array.isArray(input) ? (input.length === 1 ? input[0] : undefined) : input;
  if (project === undefined)
    throw errors.malformed(
      "'export' must be one project: the object `lacadmin project export` writes, or an array holding one",
    );
  const parsed = lacProjectSchema.safeParse(project);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 50).map((i) => ({
      path: exportPath(...i.path.map((p) => (typeof p === "number" ? p : String(p)))),
      message: i.message,
    }));
    throw errors.malformed(
      `The export is not a Live API Creator project export: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`,
      { problems },
    );
  }
  return parsed.data;
}

export function translateLacProject(input: LacImportInput, check: DefinitionCheck): LacImport {
  const project = readLacExport(input.export);
  const report = new ImportReport();
  noteSections(project, report);
  const schema = mapSchema(readSchema(input.ddl, input.dialect, report), project.Relationships, report);
  const rules = mapRules(project.Rules, schema, report);
  const versions = mapVersions(project, schema, report);
  const roles = mapRoles(project, schema, report);
  const options = mapOptions(project, report);
  const definition: ProjectDefinition = {
    authentication: {
      provider: "builtin",
      ...(options.permitAuthParameter === undefined
        ? {}
        : { permitAuthParameter: options.permitAuthParameter }),
    },
    tables: Object.fromEntries([...schema.tables.values()].map((t) => [t.name, t.definition])),
    rules: rules.rules,
    apiVersions: versions.versions,
    roles,
    libraries: {},
  };
  if (project.comments) definition.description = project.comments.slice(0, 2000);
  if (rules.usesLog || versions.usesLog) definition.libraries[LAC_LOG_LIBRARY] = { code: LAC_LOG_CODE };
  if (Object.keys(definition.apiVersions).length === 0) {
    definition.apiVersions.v1 = { resources: {} };
    report.add(
      exportPath("ApiVersions"),
      "the export has no API version; the import makes 'v1' (every table is a resource in it)",
    );
  }
  for (const version of Object.values(definition.apiVersions)) {
    if (versions.usesLog) version.libraries = [LAC_LOG_LIBRARY];
    if (options.defaultResponseFormat) version.defaultResponseFormat = options.defaultResponseFormat;
  }
  const sources = new Map<unknown, string>();
  for (const [i, rule] of rules.rules.entries()) sources.set(rule, rules.sources[i] as string);
  setAsideRefused(definition, check, sources, report);
  for (const name of [...schema.tables.keys()]) if (!definition.tables[name]) schema.tables.delete(name);
  const rows = input.data ? readDataRows(input.data, schema, input.dialect, report) : [];
  const users = mapUsers(project, definition.roles, report);
  const keys = mapKeys(
    project,
    definition.roles,
    { keepKeyValues: input.keepKeyValues, now: input.now },
    report,
  );
  return {
    definition,
    users,
    keys,
    unmapped: report.unmapped,
    rows,
    project: { name: project.name ?? null, urlName: project.url_name ?? null },
  };
}

/** Sections of the export with nothing to map to, and the export's version. */
function noteSections(project: LacProject, report: ImportReport): void {
  if (project.exportVersion && !KNOWN_EXPORT_VERSIONS.has(project.exportVersion)) {
    report.add(
      exportPath("exportVersion"),
      `export version '${project.exportVersion}' is read as v4 (the version of the admin CLI's samples)`,
    );
  }
  for (const [section, value] of Object.entries(project)) {
    if (Array.isArray(value) && value.length > 0 && !READ_SECTIONS.has(section))
      report.add(exportPath(section), `the section '${section}' is not read by the importer`);
  }
  const each = (section: "Handlers" | "NamedFilters" | "NamedSorts", what: string) =>
    project[section].forEach((item, i) => {
      report.add(exportPath(section, i), `${what} '${item.name ?? i}' has no counterpart in Tessera`);
    });
  each("Handlers", "custom endpoint");
  each("NamedFilters", "named filter (userfilter=…)");
  each("NamedSorts", "named sort (usersort=…)");
  if (project.Topics.length > 0)
    report.add(exportPath("Topics"), "rule topics (documentation of rules) have no counterpart");
  if (project.Applications.length > 0)
    report.add(
      exportPath("Applications"),
      "Data Explorer applications have no counterpart (Tessera's console explores the data)",
    );
  project.ProjectLibraries.forEach((lib, i) => {
    report.add(
      exportPath("ProjectLibraries", i),
      `library '${lib.Library?.name ?? i}': a project export names its libraries but holds no code; add the code to the definition's libraries (a provider's too) after the import`,
    );
  });
  project.DbaseSchemas.forEach((db, i) => {
    if (db.TableInfos.length > 0)
      report.add(
        exportPath("DbaseSchemas", i, "TableInfos"),
        "table settings of the data source (virtual keys and the like) are not read: the DDL's keys count",
      );
    if (db.NonPersistentAttributes.length > 0)
      report.add(
        exportPath("DbaseSchemas", i, "NonPersistentAttributes"),
        "non-persistent attributes have no counterpart (a formula into a column is the nearest)",
      );
  });
  if (project.Users.length === 0 && project.authprovider_ident != null) {
    report.add(
      exportPath("authprovider_ident"),
      "the project's authentication provider is not part of a project export; the import uses Tessera's built-in users (a custom provider can be added to the definition afterwards, see providers.md)",
    );
  }
}

/** The definition's path (`$.rules[3].expression`) as its keys. */
export function pathKeys(path: string): (string | number)[] {
  const keys: (string | number)[] = [];
  const re = /\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;
  re.lastIndex = path.startsWith("$") ? 1 : 0;
  for (let m = re.exec(path); m; m = re.exec(path)) {
    keys.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : (JSON.parse(m[3] as string) as string)));
  }
  return keys;
}

/**
 * Runs the definition check and sets aside each part a problem is in (a rule,
 * a resource or sub-resource, a role's grant or role, a column, a relationship,
 * an index, an event), until the check accepts the rest.
 */
function setAsideRefused(
  definition: ProjectDefinition,
  check: DefinitionCheck,
  sources: Map<unknown, string>,
  report: ImportReport,
): void {
  for (let round = 0; round < 20; round++) {
    const problems = check(definition);
    if (problems.length === 0) return;
    const doomedRules = new Set<unknown>();
    for (const problem of problems) {
      const removed = setAside(definition, pathKeys(problem.path), doomedRules);
      if (!removed) throw unplaceable(problems);
      const source = removed.object === undefined ? undefined : sources.get(removed.object);
      report.add(source ?? `definition:${removed.path}`, `${removed.what} is left out: ${problem.message}`);
    }
    definition.rules = definition.rules.filter((r) => !doomedRules.has(r));
  }
  throw unplaceable(check(definition));
}

/** Problems no part can be set aside for: the import cannot make a definition of this input. */
function unplaceable(problems: Problem[]) {
  return errors.malformed(
    `The import cannot make a definition Tessera accepts: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`,
    { problems },
  );
}

interface SetAside {
  what: string;
  path: string;
  object?: unknown;
}

function setAside(
  definition: ProjectDefinition,
  keys: (string | number)[],
  doomedRules: Set<unknown>,
): SetAside | undefined {
  const [section, a, b, c, d] = keys;
  const at = (n: number) => `$.${keys.slice(0, n).map(String).join(".")}`;
  if (section === "rules" && typeof a === "number") {
    const rule = definition.rules[a];
    doomedRules.add(rule);
    return { what: `rule ${rule?.name ? `'${rule.name}'` : `#${a + 1}`}`, path: at(2), object: rule };
  }
  if (section === "tables" && typeof a === "string") {
    const table = definition.tables[a];
    if (!table) return { what: `table '${a}'`, path: at(2) };
    if ((b === "columns" || b === "parents") && typeof c === "string") {
      const holder = b === "columns" ? table.columns : (table.parents ?? {});
      delete holder[c];
      return { what: `${b === "columns" ? "column" : "relationship"} '${a}.${c}'`, path: at(4) };
    }
    if (b === "indexes" && typeof c === "number") {
      table.indexes?.splice(c, 1);
      return { what: `an index of '${a}'`, path: at(4) };
    }
    delete definition.tables[a];
    return { what: `table '${a}'`, path: at(2) };
  }
  if (section === "apiVersions" && typeof a === "string") {
    const version = definition.apiVersions[a];
    if (!version) return { what: `version '${a}'`, path: at(2) };
    if (b === "events") {
      if (typeof c === "number") version.events?.splice(c, 1);
      else delete version.events;
      return { what: `an event of version '${a}'`, path: at(typeof c === "number" ? 4 : 3) };
    }
    if (b === "resources" && typeof c === "string") {
      let holder: Record<string, unknown> = version.resources;
      let name = c;
      let depth = 4;
      let rest = keys.slice(4);
      while (rest[0] === "subresources" && typeof rest[1] === "string") {
        const next = (holder[name] as { subresources?: Record<string, unknown> }).subresources;
        if (!next?.[rest[1]]) break;
        holder = next;
        name = rest[1];
        depth += 2;
        rest = rest.slice(2);
      }
      delete holder[name];
      return { what: `resource '${name}'`, path: at(depth) };
    }
    delete definition.apiVersions[a];
    return { what: `version '${a}'`, path: at(2) };
  }
  if (section === "roles" && typeof a === "string") {
    const role: RoleDefinition | undefined = definition.roles[a];
    if (role && b === "tables" && typeof c === "string") {
      delete role.tables[c];
      return { what: `the grant of role '${a}' on '${c}'`, path: at(4) };
    }
    delete definition.roles[a];
    return { what: `role '${a}'`, path: at(2) };
  }
  if (section === "libraries" && typeof a === "string") {
    delete definition.libraries[a];
    return { what: `library '${a}'`, path: at(2) };
  }
  void d;
  return undefined;
}
