/**
 * A Live API Creator project export as `lacadmin project export --format json`
 * writes it (`exportVersion` "v4", admin schema 2015–2016): one project object,
 * or an array holding it, with its sections (`Rules`, `ApiVersions` →
 * `Resources`, `Roles` → `TablePermissions` and `ApiKeyRoles`, `ApiKeys`,
 * `Users`, `Relationships`, `ProjectOptions`, …). The schema reads what the
 * importer uses and lets every other field pass: an export of a later admin
 * schema with fields of its own still reads. The sections the CLI also
 * exports on their own (`lacadmin rule export`, `role export`, `user export`,
 * …) have the same shape.
 */
import { z } from "zod";

const text = z.string().nullish();
const flag = z.boolean().nullish();
const ident = z.number().int().nullish();
const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .nullish()
    .transform((v) => v ?? []);

export const lacRuleSchema = z.looseObject({
  ident,
  entity_name: z.string(),
  attribute_name: text,
  prop4: text,
  rule_text1: text,
  rule_text2: text,
  rule_text3: text,
  rule_text4: text,
  rule_text5: text,
  predicate: text,
  name: text,
  auto_name: text,
  verbs: text,
  active: flag,
  ruletype_ident: z.number().int(),
});

const resourceAttributeSchema = z.looseObject({
  name: z.string(),
  column_name: text,
  formula: text,
  format: text,
  description: text,
  is_defined_key_part: flag,
});

export const lacResourceSchema = z.looseObject({
  ident: z.number().int(),
  resource_type_ident: z.number().int(),
  prefix: text,
  table_name: text,
  name: z.string(),
  description: text,
  is_collection: text,
  join_condition: text,
  filter: text,
  sorting: text,
  attach_path: text,
  caching: z.unknown().optional(),
  custom_class: text,
  code_text: text,
  filter_code: text,
  serial_filter: text,
  container_ident: ident,
  combined: flag,
  ResourceAttributes: list(resourceAttributeSchema),
});

const apiVersionSchema = z.looseObject({
  name: z.string(),
  Resources: list(lacResourceSchema),
});

const tablePermissionSchema = z.looseObject({
  name: text,
  entity_name: z.string(),
  column_names: text,
  predicate: text,
  access_type: text,
});

const roleSchema = z.looseObject({
  ident: ident,
  name: z.string(),
  description: text,
  default_permission: text,
  default_apivisibility: text,
  TablePermissions: list(tablePermissionSchema),
  PermissionData: list(z.unknown()),
  ApiKeyRoles: list(z.looseObject({ apikey_ident: z.number().int() })),
  ApiVisibility: list(z.unknown()),
});

const apiKeySchema = z.looseObject({
  ident: ident,
  name: z.string(),
  description: text,
  apikey: text,
  status: text,
  expiration: text,
  logging: text,
  user_identifier: text,
  data: text,
  origin: text,
});

const userSchema = z.looseObject({
  name: z.string(),
  fullname: text,
  email: text,
  status: text,
  roles: text,
  data: text,
  comments: text,
  apikey_lifespan: z.number().int().nullish(),
  password_hash: text,
  password_salt: text,
});

const relationshipSchema = z.looseObject({
  name: text,
  parent_entity_name: z.string(),
  child_entity_name: z.string(),
  role_to_child: z.string(),
  role_to_parent: z.string(),
  parent_columns: z.string(),
  child_columns: z.string(),
  update_rule: text,
  delete_rule: text,
});

const eventHandlerSchema = z.looseObject({
  name: text,
  code: text,
  active: flag,
  enabled_verbs: text,
  resource_name_pattern: text,
  eventtype_ident: z.number().int(),
  code_type: text,
});

const named = z.looseObject({ name: text });

export const lacProjectSchema = z.looseObject({
  exportVersion: text,
  adminSchemaVersion: text,
  name: text,
  url_name: text,
  comments: text,
  authprovider_ident: ident,
  Topics: list(named),
  Rules: list(lacRuleSchema),
  ApiVersions: list(apiVersionSchema),
  DbaseSchemas: list(
    z.looseObject({
      prefix: text,
      name: text,
      url: text,
      TableInfos: list(z.unknown()),
      NonPersistentAttributes: list(z.unknown()),
    }),
  ),
  ProjectLibraries: list(z.looseObject({ Library: z.looseObject({ name: text }).nullish() })),
  ProjectOptions: list(z.looseObject({ option_value: text, projectoptiontype_ident: z.number().int() })),
  ApiKeys: list(apiKeySchema),
  Roles: list(roleSchema),
  Users: list(userSchema),
  Handlers: list(named),
  EventHandlers: list(eventHandlerSchema),
  Relationships: list(relationshipSchema),
  Applications: list(named),
  NamedFilters: list(named),
  NamedSorts: list(named),
});

export type LacProject = z.infer<typeof lacProjectSchema>;
export type LacRule = z.infer<typeof lacRuleSchema>;
export type LacResource = z.infer<typeof lacResourceSchema>;
export type LacRole = LacProject["Roles"][number];
export type LacApiKey = LacProject["ApiKeys"][number];
export type LacUser = LacProject["Users"][number];
export type LacRelationship = LacProject["Relationships"][number];
export type LacEventHandler = LacProject["EventHandlers"][number];

/** The sections the importer reads; any other non-empty list in the export is reported as not read. */
export const READ_SECTIONS = new Set([
  "Topics",
  "Rules",
  "ApiVersions",
  "DbaseSchemas",
  "ProjectLibraries",
  "ProjectOptions",
  "ApiKeys",
  "Roles",
  "Users",
  "Handlers",
  "EventHandlers",
  "Relationships",
  "Applications",
  "NamedFilters",
  "NamedSorts",
]);

/** The export versions this reader knows (the samples' `v4`); others are read as far as their shape allows. */
export const KNOWN_EXPORT_VERSIONS = new Set(["v4"]);

/** An entity name as the export writes it, `prefix:table` (the data source's prefix), without the prefix. */
export function entityTable(entity: string): string {
  const colon = entity.indexOf(":");
  return colon === -1 ? entity : entity.slice(colon + 1);
}
