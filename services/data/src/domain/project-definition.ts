/**
 * The project definition format (DESIGN.md §5.1): its JSON schema (zod) for
 * structure, then semantic checks across tables, resources, roles and rules.
 * Every problem is reported with its JSON path; nothing is applied when any exists.
 */
import { z } from "zod";
import { NAME_PATTERN } from "../../../../shared/names.ts";

export const COLUMN_TYPES = ["string", "number", "integer", "boolean", "date", "datetime", "json"] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];
export const ACCESS_LEVELS = ["read", "insert", "update", "delete"] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];
export const RULE_TYPES = [
  "sum",
  "count",
  "min",
  "max",
  "formula",
  "parentCopy",
  "validation",
  "commitValidation",
  "earlyEvent",
  "event",
  "commitEvent",
  "managedParent",
] as const;

/** Stored field names: no `$`, no `.`, no leading `_` (reserved for Tessera's own fields). */
export const COLUMN_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
const name = z.string().regex(NAME_PATTERN, "must match [A-Za-z][A-Za-z0-9_-]{0,62}");
const columnName = z.string().regex(COLUMN_NAME_PATTERN, "must match [A-Za-z][A-Za-z0-9_]{0,62}");

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

const tableSchema = z.strictObject({
  key: z.array(columnName).min(1),
  columns: z.record(columnName, columnSchema),
  parents: z.record(name, parentSchema).optional(),
});

interface ResourceShape {
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
  table: name,
  attributes: z.record(columnName, columnName).optional(),
  subresources: z.record(name, subresourceSchema).optional(),
  filter: z.string().max(4096).optional(),
  order: z.string().max(1024).optional(),
});

const roleTableSchema = z.strictObject({
  access: z.array(z.enum(ACCESS_LEVELS)),
  rowFilter: z.string().max(4096).optional(),
  columns: z.array(columnName).optional(),
});

const roleSchema = z.strictObject({
  description: z.string().optional(),
  tables: z.record(z.union([z.literal("*"), name]), roleTableSchema),
});

const ruleSchema = z.strictObject({
  table: name,
  type: z.enum(RULE_TYPES),
  name: z.string().max(200).optional(),
  column: columnName.optional(),
  children: name.optional(),
  of: columnName.optional(),
  where: z.string().max(4096).optional(),
  expression: z.string().max(65_536).optional(),
  message: z.string().max(2000).optional(),
  parent: name.optional(),
  from: columnName.optional(),
  code: z.string().max(262_144).optional(),
});

const authenticationSchema = z.strictObject({
  provider: z.enum(["builtin", "custom"]).default("builtin"),
  keyLifetimeSeconds: z
    .number()
    .int()
    .positive()
    .max(366 * 24 * 3600)
    .optional(),
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
  /** Accept `?auth=<key>:1` on GET (the original "Permit Authorization parameter in URL"). Default true. */
  permitAuthParameter: z.boolean().optional(),
});

export const projectDefinitionSchema = z.strictObject({
  description: z.string().max(2000).optional(),
  authentication: authenticationSchema.default({ provider: "builtin" }),
  tables: z.record(name, tableSchema),
  rules: z.array(ruleSchema).default([]),
  apiVersions: z.record(name, z.strictObject({ resources: z.record(name, resourceSchema).default({}) })),
  roles: z.record(z.string().min(1).max(100), roleSchema).default({}),
  libraries: z.record(name, z.strictObject({ code: z.string().max(1_048_576) })).default({}),
});

export type ProjectDefinition = z.infer<typeof projectDefinitionSchema>;
export type TableDefinition = z.infer<typeof tableSchema>;
export type ColumnDefinition = z.infer<typeof columnSchema>;
export type ResourceDefinition = ResourceShape;
export type RuleDefinition = z.infer<typeof ruleSchema>;
export type RoleDefinition = z.infer<typeof roleSchema>;

export interface Problem {
  path: string;
  message: string;
}

export function jsonPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, part) =>
      typeof part === "number"
        ? `${acc}[${part}]`
        : /^[A-Za-z_][A-Za-z0-9_]*$/.test(String(part))
          ? `${acc}.${String(part)}`
          : `${acc}[${JSON.stringify(String(part))}]`,
    "$",
  );
}

/** Structural parse; semantic checks are in project-model.ts (they need the parsed shape). */
export function parseProjectDefinition(
  input: unknown,
): { ok: true; definition: ProjectDefinition } | { ok: false; problems: Problem[] } {
  const result = projectDefinitionSchema.safeParse(input);
  if (result.success) return { ok: true, definition: result.data };
  return {
    ok: false,
    problems: result.error.issues.map((issue) => ({ path: jsonPath(issue.path), message: issue.message })),
  };
}
