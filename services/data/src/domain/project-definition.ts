/**
 * The project definition format (docs/project-definitions.md): its schema
 * (zod) for structure. The semantic checks across tables, resources, roles and
 * rules are in project-model.ts. Every problem is reported with its JSON path;
 * nothing is applied when any exists.
 */
import { z } from "zod";
import { NAME_PATTERN } from "../../../../shared/names.ts";
import { salvage, valueAt } from "./definition-salvage.ts";
import { checkFilterText } from "./filter-check.ts";
import { jsonPath, type Problem } from "./problems.ts";
import { compileProject, type FilterChecker, type ProjectIdentity } from "./project-model.ts";

export const COLUMN_TYPES = ["string", "number", "integer", "boolean", "date", "datetime", "json"] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];
export const ACCESS_LEVELS = ["read", "insert", "update", "delete"] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

/** Stored field names: no `$`, no `.`, no leading `_` (reserved for Tessera's own fields). */
export const COLUMN_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
const name = z.string().regex(NAME_PATTERN, "must match [A-Za-z][A-Za-z0-9_-]{0,62}");
const columnName = z.string().regex(COLUMN_NAME_PATTERN, "must match [A-Za-z][A-Za-z0-9_]{0,62}");
/** A parent role, or a path of roles up to a grand-parent and further (`order.customer`). */
const rolePath = z
  .string()
  .regex(
    new RegExp(`^${NAME_PATTERN.source.slice(1, -1)}(\\.${NAME_PATTERN.source.slice(1, -1)}){0,7}$`),
    "must be a parent role, or up to 8 roles joined by '.'",
  );

const columnSchema = z.strictObject({
  type: z.enum(COLUMN_TYPES),
  required: z.boolean().optional(),
  generated: z.boolean().optional(),
  default: z.unknown().optional(),
  maxLength: z.number().int().positive().optional(),
});

const parentSchema = z.strictObject({
  table: name,
  columns: z.record(columnName, columnName),
  children: name.optional(),
});

/** A store index for the filters and orders an app uses (table-indexes.ts adds the key's and foreign keys'). */
const indexSchema = z.strictObject({
  columns: z.array(columnName).min(1).max(8),
  unique: z.boolean().optional(),
});

const tableSchema = z.strictObject({
  key: z.array(columnName).min(1),
  columns: z.record(columnName, columnSchema),
  parents: z.record(name, parentSchema).optional(),
  indexes: z.array(indexSchema).max(32).optional(),
});

interface ResourceShape {
  /** `table` (the default): a resource over a table. */
  type?: "table";
  table: string;
  attributes?: Record<string, string>;
  subresources?: Record<string, ResourceShape & { via: string }>;
  filter?: string;
  order?: string;
}

const subresourceSchema: z.ZodType<ResourceShape & { via: string }> = z.lazy(() =>
  z.strictObject({
    table: name,
    via: name,
    attributes: z.record(columnName, columnName).optional(),
    subresources: z.record(name, subresourceSchema).optional(),
    filter: z.string().max(4096).optional(),
    order: z.string().max(1024).optional(),
  }),
);

const resourceSchema = z.strictObject({
  type: z.literal("table").optional(),
  table: name,
  attributes: z.record(columnName, columnName).optional(),
  subresources: z.record(name, subresourceSchema).optional(),
  filter: z.string().max(4096).optional(),
  order: z.string().max(1024).optional(),
});

/** Customer JavaScript of an API version: a function body (it may `await` and `return`). */
const scriptCode = z.string().min(1, "must not be empty").max(262_144);

/** A resource whose GET answer is computed by JavaScript (docs/javascript.md). */
const javascriptResourceSchema = z.strictObject({
  type: z.literal("javascript"),
  code: scriptCode,
  /** Only keys with one of these roles may call it; absent: every key of the project. */
  roles: z.array(z.string().min(1).max(100)).max(100).optional(),
  description: z.string().max(2000).optional(),
});

/** Custom resources: over a table (no `type`, or `table`), or computed by JavaScript. */
const customResourceSchema = z.discriminatedUnion("type", [resourceSchema, javascriptResourceSchema], {
  error: "must be 'javascript', or 'table' (the default)",
});

/** JavaScript run before (`request`) or after (`response`) every request to a resource of the version. */
const eventSchema = z.strictObject({
  type: z.enum(["request", "response"]),
  name: z.string().min(1).max(200).optional(),
  code: scriptCode,
});

const versionSchema = z.strictObject({
  resources: z.record(name, customResourceSchema).default({}),
  events: z.array(eventSchema).max(50).optional(),
  /** Entries of `libraries` loaded before the version's JavaScript resources and events. */
  libraries: z.array(name).max(50).optional(),
});

const roleTableSchema = z.strictObject({
  access: z.array(z.enum(ACCESS_LEVELS)),
  rowFilter: z.string().max(4096).optional(),
  columns: z.array(columnName).optional(),
});

const roleSchema = z.strictObject({
  description: z.string().optional(),
  /** Keys with this role get the whole API document (`@docs`), not only what their roles allow. */
  apiDocs: z.boolean().optional(),
  tables: z.record(z.union([z.literal("*"), name]), roleTableSchema),
});

const ruleName = z.string().max(200).optional();
const expression = z.string().min(1, "must not be empty").max(65_536);
const whereClause = z.string().max(4096).optional();
const ruleCode = z.string().min(1, "must not be empty").max(262_144);

/** Fields every rule has. */
const ruleBase = { table: name, name: ruleName };

/** sum, min, max: `column` = the aggregate of `children`.`of` (over children matching `where`). */
const valueAggregate = <T extends "sum" | "min" | "max">(type: T) =>
  z.strictObject({
    ...ruleBase,
    type: z.literal(type),
    column: columnName,
    children: name,
    of: columnName,
    where: whereClause,
  });

const ruleSchema = z.discriminatedUnion("type", [
  valueAggregate("sum"),
  z.strictObject({
    ...ruleBase,
    type: z.literal("count"),
    column: columnName,
    children: name,
    where: whereClause,
  }),
  valueAggregate("min"),
  valueAggregate("max"),
  z.strictObject({ ...ruleBase, type: z.literal("formula"), column: columnName, expression }),
  z.strictObject({
    ...ruleBase,
    type: z.literal("parentCopy"),
    column: columnName,
    parent: rolePath,
    from: columnName,
  }),
  ...(["validation", "commitValidation"] as const).map((type) =>
    z.strictObject({
      ...ruleBase,
      type: z.literal(type),
      expression,
      message: z.string().max(2000).optional(),
    }),
  ),
  ...(["earlyEvent", "event", "commitEvent"] as const).map((type) =>
    z.strictObject({ ...ruleBase, type: z.literal(type), code: ruleCode }),
  ),
  z.strictObject({ ...ruleBase, type: z.literal("managedParent"), parent: name }),
]);

/** Lifetime of the keys a login issues: a project's, or one built-in user's. */
export const keyLifetimeSecondsSchema = z
  .number()
  .int()
  .positive()
  .max(366 * 24 * 3600);

const authenticationSchema = z.strictObject({
  provider: z.enum(["builtin", "custom"]).default("builtin"),
  keyLifetimeSeconds: keyLifetimeSecondsSchema.optional(),
  library: name.optional(),
  createFunction: z
    .string()
    .regex(/^[A-Za-z_$][A-Za-z0-9_$]*$/)
    .optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  /** Let the provider's own failure message reach the client (default: a generic summary). */
  exposeProviderMessages: z.boolean().optional(),
  /** Hosts a custom provider may call with tessera.fetchJson. */
  allowedHosts: z.array(z.string().max(253)).max(100).optional(),
  /**
   * The login body's fields that name the account (a custom provider's e-mail, say):
   * the lock-out counts failures per their values. The built-in provider uses `username`.
   */
  identityFields: z.array(z.string().min(1).max(100)).min(1).max(10).optional(),
  /** Accept `?auth=<key>:1` on GET (the original "Permit Authorization parameter in URL"). Default true. */
  permitAuthParameter: z.boolean().optional(),
});

export const projectDefinitionSchema = z.strictObject({
  description: z.string().max(2000).optional(),
  authentication: authenticationSchema.default({ provider: "builtin" }),
  tables: z.record(name, tableSchema),
  rules: z.array(ruleSchema).default([]),
  apiVersions: z.record(name, versionSchema),
  roles: z.record(z.string().min(1).max(100), roleSchema).default({}),
  libraries: z.record(name, z.strictObject({ code: z.string().max(1_048_576) })).default({}),
  /** `public`: `@docs` answers a request without any key with the whole document. Default off. */
  apiDocs: z.strictObject({ public: z.boolean().default(false) }).optional(),
});

export type ProjectDefinition = z.infer<typeof projectDefinitionSchema>;
export type TableDefinition = z.infer<typeof tableSchema>;
export type ColumnDefinition = z.infer<typeof columnSchema>;
export type ResourceDefinition = ResourceShape;
export type JavaScriptResourceDefinition = z.infer<typeof javascriptResourceSchema>;
export type CustomResourceDefinition = z.infer<typeof customResourceSchema>;
export type VersionDefinition = z.infer<typeof versionSchema>;
export type EventDefinition = z.infer<typeof eventSchema>;
export type RuleDefinition = z.infer<typeof ruleSchema>;
export type RuleType = RuleDefinition["type"];
export type RoleDefinition = z.infer<typeof roleSchema>;
export type AuthenticationDefinition = z.infer<typeof authenticationSchema>;

export { jsonPath, type Problem } from "./problems.ts";

/** Identity of a model compiled only to be checked: it is never served, so it has no storage. */
export const UNSERVED_IDENTITY: ProjectIdentity = {
  account: "",
  name: "",
  uid: "",
  revision: 0,
  storage: { database: "", collectionPrefix: "" },
};

/**
 * Parses a definition. When its structure is wrong, the answer lists every
 * structural problem and also every semantic problem of the parts that did
 * parse (see definition-salvage.ts), each once: one answer lists what to fix.
 * `checkFilter` checks filter texts there (the checker the admin API uses by default).
 */
export function parseProjectDefinition(
  input: unknown,
  checkFilter: FilterChecker = checkFilterText,
): { ok: true; definition: ProjectDefinition } | { ok: false; problems: Problem[] } {
  const result = projectDefinitionSchema.safeParse(input);
  if (result.success) return { ok: true, definition: result.data };
  const problems = result.error.issues.flatMap((issue) => structuralProblems(input, issue));
  const saved = salvage(input, result.error.issues, (value) => projectDefinitionSchema.safeParse(value));
  if (saved) {
    const compiled = compileProject(UNSERVED_IDENTITY, saved.definition, checkFilter, saved.lost);
    if (!compiled.ok) problems.push(...compiled.problems.map((p) => inSentRules(p, saved.ruleIndexes)));
  }
  return { ok: false, problems };
}

/** A problem of the salvaged definition, with its rule numbered as in the definition as sent. */
function inSentRules(problem: Problem, ruleIndexes: number[]): Problem {
  const path = problem.path.replace(/^\$\.rules\[(\d+)\]/, (whole, i) => {
    const sent = ruleIndexes[Number(i)];
    return sent === undefined ? whole : `$.rules[${sent}]`;
  });
  return { ...problem, path };
}

/** The problems of one schema issue, in words for people writing definitions. */
function structuralProblems(input: unknown, issue: z.core.$ZodIssue): Problem[] {
  if (issue.code === "unrecognized_keys") {
    const holder = valueAt(input, issue.path);
    const ruleType =
      issue.path[0] === "rules" && issue.path.length === 2 ? valueAt(holder, ["type"]) : undefined;
    return issue.keys.map((key) => ({
      path: jsonPath([...issue.path, key]),
      message: typeof ruleType === "string" ? `a ${ruleType} rule has no '${key}'` : `unknown field '${key}'`,
    }));
  }
  const missing = valueAt(input, issue.path) === undefined;
  const message =
    missing && (issue.code === "invalid_type" || issue.code === "invalid_union")
      ? "required"
      : issue.code === "invalid_key"
        ? (issue.issues[0]?.message ?? issue.message)
        : issue.message;
  return [{ path: jsonPath(issue.path), message }];
}
