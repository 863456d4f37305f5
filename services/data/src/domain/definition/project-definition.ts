/**
 * The project definition format (docs/project-definitions.md): its schema
 * (zod) for structure. The semantic checks across tables, resources, roles and
 * rules are the model's (model/project-model.ts; model/definition-check.ts runs
 * both). Every problem is reported with its JSON path; nothing is applied when
 * any exists.
 */
import { z } from "zod";
import { COLUMN_NAME_PATTERN, NAME_PATTERN } from "../../../../../shared/names.ts";
import { type Salvaged, salvage, valueAt } from "./definition-salvage.ts";
import { jsonPath, type Problem } from "./problems.ts";

export const COLUMN_TYPES = ["string", "number", "integer", "boolean", "date", "datetime", "json"] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];
export const ACCESS_LEVELS = ["read", "insert", "update", "delete"] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

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

/** Formats a version may answer GETs in by default (CSV is asked per request: not every answer has one). */
export const VERSION_RESPONSE_FORMATS = ["json", "jsonObject", "xml"] as const;
export type VersionResponseFormat = (typeof VERSION_RESPONSE_FORMATS)[number];

/** An XML element name with no prefix that XML reserves nothing of (no leading `xml`). */
const xmlElementName = z
  .string()
  .regex(
    /^(?![Xx][Mm][Ll])[A-Za-z_][A-Za-z0-9_.-]{0,99}$/,
    "must be an XML name: [A-Za-z_][A-Za-z0-9_.-]{0,99}, not starting with 'xml'",
  );

const versionSchema = z.strictObject({
  resources: z.record(name, customResourceSchema).default({}),
  events: z.array(eventSchema).max(50).optional(),
  /** Entries of `libraries` loaded before the version's JavaScript resources and events. */
  libraries: z.array(name).max(50).optional(),
  /** GET answers' format when a request names none (the original's "Default response format"). */
  defaultResponseFormat: z.enum(VERSION_RESPONSE_FORMATS).optional(),
  /** The root element of XML answers (the original's "XML Document Root Element Tag Name"). */
  xmlRootElement: xmlElementName.optional(),
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

/** Keys a login issues live this long unless the project or the user says otherwise. */
export const DEFAULT_KEY_LIFETIME_SECONDS = 3600;

/** Signature algorithms an `oidc` provider may accept: asymmetric only (an HMAC secret cannot be published in a JWKS). */
export const OIDC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;

/**
 * Why an issuer's or a key set's URL may not be used, or undefined: https, or
 * http on a loopback host (a local issuer in development, reachable only when
 * the operator allows loopback egress); no credentials, no fragment.
 */
export function oidcUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute URL";
  }
  if (url.username || url.password || url.hash) return "must have no credentials and no fragment";
  if (url.protocol === "https:") return undefined;
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname.toLowerCase());
  if (url.protocol === "http:" && loopback) return undefined;
  return "must be an https URL (http only on a loopback host)";
}

/** A claim of a token, by name or by a dotted path into nested objects (`realm_access.roles`). */
const claimPath = z
  .string()
  .regex(/^[^.\s]{1,100}(\.[^.\s]{1,100}){0,7}$/, "must be a claim name, or names joined by '.'");

/** The `oidc` provider: tokens of an OpenID Connect issuer, verified against its published keys. */
const oidcSchema = z.strictObject({
  /** The issuer's URL: its discovery document is `<issuer>/.well-known/openid-configuration`; tokens' `iss`. */
  issuer: z
    .string()
    .max(2000)
    .superRefine((text, ctx) => {
      const problem = oidcUrlProblem(text);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  /** What tokens' `aud` must name (one of them). */
  audience: z.union([z.string().min(1).max(500), z.array(z.string().min(1).max(500)).min(1).max(20)]),
  algorithms: z.array(z.enum(OIDC_ALGORITHMS)).min(1).max(OIDC_ALGORITHMS.length).default(["RS256"]),
  /** The claim whose value names the key's user (default `sub`). */
  userIdentifierClaim: claimPath.default("sub"),
  /** The claim holding the user's groups or roles (a text or a list of texts). */
  rolesClaim: claimPath.optional(),
  /** Claim value → the project's roles it grants; without it, claim values are role names. */
  roleMap: z.record(z.string().min(1).max(500), z.array(z.string().min(1).max(100)).max(50)).optional(),
  /** Global name → the claim whose value it takes (usable as `@{name}` in row filters). */
  globals: z.record(z.string().min(1).max(100), claimPath).optional(),
  /** Leeway for `exp`, `nbf` and `iat` against clocks that differ (default 60 s). */
  clockSkewSeconds: z.number().int().min(0).max(600).default(60),
});

const authenticationSchema = z.strictObject({
  provider: z.enum(["builtin", "custom", "oidc"]).default("builtin"),
  /** The `oidc` provider's settings (only with `provider: "oidc"`). */
  oidc: oidcSchema.optional(),
  keyLifetimeSeconds: keyLifetimeSecondsSchema.optional(),
  library: name.optional(),
  createFunction: z
    .string()
    .regex(/^[A-Za-z_$][A-Za-z0-9_$]*$/)
    .optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  /** Let the provider's own failure message reach the client (default: a generic summary). */
  exposeProviderMessages: z.boolean().optional(),
  /** Hosts a custom provider may call with tessera.fetchJson; an `oidc` provider's key-set host when not the issuer's. */
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
export type OidcDefinition = z.infer<typeof oidcSchema>;

export { jsonPath, type Problem } from "./problems.ts";

/** A definition's structure: the definition, or its structural problems and what could be saved of it. */
export type DefinitionStructure =
  | { ok: true; definition: ProjectDefinition }
  | { ok: false; problems: Problem[]; salvaged: Salvaged<ProjectDefinition> | undefined };

/**
 * Parses a definition's structure. When it is wrong, the answer lists every
 * structural problem and the definition without the parts that hold them
 * (see definition-salvage.ts), whose semantic problems the model's
 * compilation finds (model/definition-check.ts).
 */
export function parseDefinitionStructure(input: unknown): DefinitionStructure {
  const result = projectDefinitionSchema.safeParse(input);
  if (result.success) return { ok: true, definition: result.data };
  const problems = result.error.issues.flatMap((issue) => structuralProblems(input, issue));
  const salvaged = salvage(input, result.error.issues, (value) => projectDefinitionSchema.safeParse(value));
  return { ok: false, problems, salvaged };
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
