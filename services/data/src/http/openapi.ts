/**
 * `GET …/<version>/@docs`: an OpenAPI 3.1 document of one API version, as the
 * caller may use it. Each resource (tables, custom resources and their nested
 * resources) appears with the verbs the caller's view allows, and its schemas
 * hold only the attributes that view may read (`row.<resource>`), insert
 * (`insert.<resource>`) or update (`update.<resource>`).
 */
import type {
  ColumnModel,
  ProjectModel,
  ResourceModel,
  TableModel,
  VersionModel,
} from "../domain/model/project-model.ts";
import { resourceOfTable } from "../domain/model/project-model.ts";
import type { JavaScriptResourceModel } from "../domain/model/script-model.ts";
import { columnNamed } from "../domain/model/table-model.ts";
import { type Addressing, collectionHref } from "../domain/read/representation.ts";
import { REFUSAL_CODES, REFUSAL_STATUS } from "../scripts/script-answers.ts";
import type { AccessView } from "./access-view.ts";
import {
  AUTHENTICATION_TAG,
  COMMON_RESPONSES,
  COMMON_SCHEMAS,
  DELETE_PARAMETERS,
  FORMAT_PARAMETERS,
  formattedContent,
  type Json,
  META_TAG,
  metaPaths,
  PARAMETERS,
  READ_CHILDREN_PARAMETERS,
  READ_ERRORS,
  READ_LIST_PARAMETERS,
  READ_ONE_PARAMETERS,
  ref,
  WRITE_ERRORS,
  WRITE_PARAMETERS,
} from "./openapi-common.ts";
import { WEBHOOKS } from "./openapi-webhooks.ts";

export interface DocsRequest {
  project: ProjectModel;
  version: VersionModel;
  addressing: Addressing;
  access: AccessView;
  /** Whether the view may call a JavaScript resource (its `roles`). */
  mayCall: (resource: JavaScriptResourceModel) => boolean;
  /** True when the view is the whole API (a role with `apiDocs`, or public docs read without a key). */
  whole: boolean;
  /** The `Authorization` scheme words the service accepts. */
  authSchemes: string[];
}

const HEADER_SCHEME = "apiKey";
const PARAMETER_SCHEME = "authParameter";

function typeSchema(column: ColumnModel): Json {
  switch (column.type) {
    case "string":
      return column.maxLength === undefined
        ? { type: "string" }
        : { type: "string", maxLength: column.maxLength };
    case "number":
    case "integer":
    case "boolean":
      return { type: column.type };
    case "date":
      return { type: "string", format: "date" };
    case "datetime":
      return { type: "string", format: "date-time" };
    case "json":
      return {};
  }
}

/**
 * A column's value: as read (null unless a key column), as written (null unless
 * required; with the default and what a generated column does) or as a key.
 */
function columnSchema(column: ColumnModel, use: "read" | "write" | "key", table: TableModel): Json {
  const schema = typeSchema(column);
  const nullable = use === "read" ? !table.key.includes(column.name) : use === "write" && !column.required;
  if (column.type === "json") schema.description = "Any JSON value.";
  else if (nullable) schema.type = [schema.type, "null"];
  if (use !== "write") return schema;
  if (column.default !== undefined) schema.default = column.default;
  if (column.generated) schema.description = "Generated (the next number of a sequence) when left out.";
  return schema;
}

const withRequired = (schema: Json, required: string[]): Json =>
  required.length === 0 ? schema : { ...schema, required };

function visibleAttributes(resource: ResourceModel, columns: Set<string> | null) {
  return resource.attributes.filter((a) => !columns || columns.has(a.column.name));
}

const subName = (container: ResourceModel, sub: ResourceModel) => sub.name.slice(container.name.length + 1);

function rowSchema(resource: ResourceModel, access: AccessView, columns: Set<string> | null): Json {
  const attributes = visibleAttributes(resource, columns);
  const properties: Json = { "@metadata": ref("schemas", "RowMetadata") };
  for (const a of attributes) properties[a.name] = columnSchema(a.column, "read", resource.table);
  for (const sub of resource.subresources) {
    if (!sub.via || !access(sub.table, "read")) continue;
    properties[subName(resource, sub)] =
      sub.via.kind === "children"
        ? {
            type: "array",
            items: { anyOf: [ref("schemas", `row.${sub.name}`), ref("schemas", "NextBatch")] },
          }
        : { anyOf: [ref("schemas", `row.${sub.name}`), { type: "null" }] };
  }
  return withRequired(
    {
      type: "object",
      description: `An object of '${resource.name}' as read (\`@metadata\` is left out with \`nometa\`).`,
      additionalProperties: false,
      properties,
    },
    attributes.map((a) => a.name),
  );
}

/** Foreign-key columns: filled from the parent in a nested insert, so not required there. */
function foreignKeyColumns(table: TableModel): Set<string> {
  return new Set([...table.parents.values()].flatMap((p) => p.childColumns));
}

/** Child collections that can be written inside an object (cascade insert). */
function childCollections(resource: ResourceModel, version: VersionModel): [string, ResourceModel][] {
  if (!resource.isTable) {
    return resource.subresources
      .filter((s) => s.via?.kind === "children")
      .map((s): [string, ResourceModel] => [subName(resource, s), s]);
  }
  return [...resource.table.children.values()].map((rel): [string, ResourceModel] => [
    rel.childrenName,
    resourceOfTable(version, rel.childTable),
  ]);
}

function insertSchema(resource: ResourceModel, req: DocsRequest, columns: Set<string> | null): Json {
  const fk = foreignKeyColumns(resource.table);
  const attributes = visibleAttributes(resource, columns);
  const properties: Json = { "@metadata": ref("schemas", "InsertMetadata") };
  for (const a of attributes) properties[a.name] = columnSchema(a.column, "write", resource.table);
  for (const [name, child] of childCollections(resource, req.version)) {
    if (req.access(child.table, "insert")) {
      properties[name] = { type: "array", items: ref("schemas", `insert.${child.name}`) };
    }
  }
  return withRequired(
    {
      type: "object",
      description:
        "An object to insert. Foreign keys are filled in from the parent when the object is nested in it.",
      additionalProperties: false,
      properties,
    },
    attributes
      .filter((a) => a.column.required && a.column.default === undefined && !a.column.generated)
      .filter((a) => !fk.has(a.column.name))
      .map((a) => a.name),
  );
}

/** The insert body at the top of a request: foreign keys are required there too. */
function topInsertSchema(resource: ResourceModel, columns: Set<string> | null): Json {
  const fk = foreignKeyColumns(resource.table);
  const required = visibleAttributes(resource, columns)
    .filter((a) => a.column.required && a.column.default === undefined && fk.has(a.column.name))
    .map((a) => a.name);
  return withRequired(ref("schemas", `insert.${resource.name}`), required);
}

function updateSchema(resource: ResourceModel, req: DocsRequest, columns: Set<string> | null): Json {
  const properties: Json = { "@metadata": ref("schemas", "UpdateMetadata") };
  for (const a of visibleAttributes(resource, columns)) {
    properties[a.name] = columnSchema(a.column, "write", resource.table);
  }
  for (const [name] of childCollections(resource, req.version)) {
    properties[name] = {
      type: "array",
      description: "Nested objects: those with `@metadata.checksum` are updated, the others inserted.",
      items: { type: "object" },
    };
  }
  return {
    type: "object",
    description:
      "Only the attributes sent change; key attributes cannot change. `@metadata.checksum` is the object's checksum as last read, or `override`.",
    required: ["@metadata"],
    additionalProperties: false,
    properties,
  };
}

function keyParameter(table: TableModel): Json {
  const columns = table.key.map((k) => columnNamed(table, k));
  const description = `The key (${table.key.join(", ")}), URL-encoded${columns.length > 1 ? "; the values joined by ','" : ""}.`;
  const [only] = columns;
  if (only && columns.length === 1) {
    return {
      name: "key",
      in: "path",
      required: true,
      description,
      schema: columnSchema(only, "key", table),
    };
  }
  return {
    name: "key",
    in: "path",
    required: true,
    description,
    style: "simple",
    explode: false,
    schema: {
      type: "array",
      prefixItems: columns.map((c) => columnSchema(c, "key", table)),
      // Tools written for OpenAPI 3.0 want `items` on every array; prefixItems says more.
      items: { type: [...new Set(columns.map((c) => typeSchema(c).type as string))] },
      minItems: columns.length,
      maxItems: columns.length,
    },
  };
}

const params = (names: string[]) => names.map((n) => ref("parameters", n));

const txAnswer = (status: string, description: string) => ({
  [status]: {
    description,
    content: { "application/json": { schema: ref("schemas", "TransactionSummary") } },
  },
});

interface Security {
  read: Json[];
  write: Json[];
}

/** The answer of a live query: Server-Sent Events. */
const LIVE_QUERY_STREAM: Json = {
  schema: {
    type: "string",
    description:
      "Server-Sent Events: `snapshot` (the page a GET answers), then `change` (one object the key may see, " +
      "with `@metadata.verb` INSERT, UPDATE or DELETE; `id:` its position in the change feed); `reset` when " +
      "`Last-Event-ID` names a position no longer kept; `cut` (a slow client; resume with Last-Event-ID) " +
      "and `closed` (the key was revoked or expired; the error body) end the stream. Comment lines are heartbeats.",
  },
};

/** The paths of one resource and the schemas they use; undefined when the view allows nothing on it. */
function resourcePaths(
  resource: ResourceModel,
  req: DocsRequest,
  security: Security,
): { paths: Json; schemas: Json } | undefined {
  const name = resource.name;
  const can = {
    read: req.access(resource.table, "read"),
    insert: req.access(resource.table, "insert"),
    update: req.access(resource.table, "update"),
    delete: req.access(resource.table, "delete"),
  };
  if (!can.read && !can.insert && !can.update && !can.delete) return undefined;
  const schemas: Json = {};
  const tags = [name];
  const collection: Json = {};
  const object: Json = { parameters: [keyParameter(resource.table)] };
  const page = {
    type: "array",
    items: { anyOf: [ref("schemas", `row.${name}`), ref("schemas", "NextBatch")] },
  };
  if (can.read) {
    schemas[`row.${name}`] = rowSchema(resource, req.access, can.read.columns);
    collection.get = {
      tags,
      operationId: `list.${name}`,
      summary: `A page of '${name}'`,
      security: security.read,
      parameters: params(
        resource.via?.kind === "children"
          ? READ_CHILDREN_PARAMETERS
          : [...READ_LIST_PARAMETERS, "lastEventId"],
      ),
      responses: {
        "200": {
          description: "A page; with `Accept: text/event-stream`, a live query (docs/realtime.md).",
          content: { ...formattedContent(page), "text/event-stream": LIVE_QUERY_STREAM },
        },
        ...READ_ERRORS,
        "429": { description: "Too many live queries open for the account or the key (4295)." },
      },
    };
    object.get = {
      tags,
      operationId: `get.${name}`,
      summary: `One object of '${name}' by key`,
      security: security.read,
      parameters: params(READ_ONE_PARAMETERS),
      responses: {
        "200": {
          description: "An array of the object, or empty when there is none the key may see.",
          content: formattedContent({ type: "array", maxItems: 1, items: ref("schemas", `row.${name}`) }),
        },
        ...READ_ERRORS,
      },
    };
  }
  /** A write: its JSON body (none for DELETE) and the transaction summary it answers. */
  const write = (id: string, summary: string, body: Json | undefined, status: string, answer: string) => ({
    tags,
    operationId: `${id}.${name}`,
    summary,
    security: security.write,
    parameters: params(body ? WRITE_PARAMETERS : DELETE_PARAMETERS),
    ...(body ? { requestBody: { required: true, content: { "application/json": { schema: body } } } } : {}),
    responses: { ...txAnswer(status, `${answer}; every object changed.`), ...WRITE_ERRORS },
  });
  if (can.insert) {
    schemas[`insert.${name}`] = insertSchema(resource, req, can.insert.columns);
    const top = topInsertSchema(resource, can.insert.columns);
    collection.post = write(
      "insert",
      `Insert into '${name}': one object or an array, in one transaction`,
      { anyOf: [top, { type: "array", minItems: 1, items: top }] },
      "201",
      "Inserted",
    );
  }
  if (can.update) {
    schemas[`update.${name}`] = updateSchema(resource, req, can.update.columns);
    const one = ref("schemas", `update.${name}`);
    collection.put = write(
      "updateMany",
      `Update objects of '${name}', each named by its key or \`@metadata.href\``,
      { type: "array", minItems: 1, items: one },
      "200",
      "Updated",
    );
    object.put = write("update", `Update one object of '${name}'`, one, "200", "Updated");
  }
  if (can.delete) {
    object.delete = write("delete", `Delete one object of '${name}'`, undefined, "200", "Deleted");
  }
  const paths: Json = {};
  if (Object.keys(collection).length > 0) paths[`/${name}`] = collection;
  if (Object.keys(object).length > 1) paths[`/${name}/{key}`] = object;
  return { paths, schemas };
}

/** The paths of a JavaScript resource: GET only, of the collection and of one key, answering free-form JSON. */
function javascriptResourcePaths(resource: JavaScriptResourceModel, security: Security): Json {
  const name = resource.name;
  const get = (id: string, summary: string, parameters: Json[]) => ({
    tags: [name],
    operationId: `${id}.${name}`,
    summary,
    description:
      "Computed by the project's JavaScript. Every query parameter (other than `auth`) is handed to the code; `pagesize` and `offset` are checked first.",
    security: security.read,
    parameters,
    responses: {
      "200": {
        description: "The code's answer.",
        content: formattedContent(ref("schemas", "JavaScriptAnswer")),
      },
      ...READ_ERRORS,
      "500": ref("responses", "ScriptFailed"),
      "503": ref("responses", "Unavailable"),
    },
  });
  const key = {
    name: "key",
    in: "path",
    required: true,
    description: "Handed to the code as `request.key`.",
    schema: { type: "string" },
  };
  return {
    [`/${name}`]: { get: get("list", `The answer of '${name}'`, params(JAVASCRIPT_PARAMETERS)) },
    [`/${name}/{key}`]: {
      parameters: [key],
      get: get("get", `The answer of '${name}' for one key`, params(JAVASCRIPT_PARAMETERS)),
    },
  };
}

const JAVASCRIPT_PARAMETERS = ["pagesize", "offset", ...FORMAT_PARAMETERS];

function describeResource(resource: ResourceModel): string {
  if (resource.isTable) return `The table '${resource.table.name}'.`;
  const nested = resource.name.includes(".") ? "nested " : "";
  return `A ${nested}custom resource over the table '${resource.table.name}'.`;
}

export function openApiDocument(req: DocsRequest): Json {
  const { project, version, addressing } = req;
  const permitsParameter = project.definition.authentication.permitAuthParameter !== false;
  const header = { [HEADER_SCHEME]: [] };
  const security: Security = {
    read: permitsParameter ? [header, { [PARAMETER_SCHEME]: [] }] : [header],
    write: [header],
  };
  const schemas: Json = { ...COMMON_SCHEMAS };
  const paths: Json = {};
  const tags: Json[] = [];
  for (const resource of version.resources.values()) {
    const parts = resourcePaths(resource, req, security);
    if (!parts) continue;
    tags.push({ name: resource.name, description: describeResource(resource) });
    Object.assign(paths, parts.paths);
    Object.assign(schemas, parts.schemas);
  }
  for (const resource of version.scripts.resources.values()) {
    if (!req.mayCall(resource)) continue;
    tags.push({
      name: resource.name,
      description: resource.description ?? "A resource computed by JavaScript.",
    });
    Object.assign(paths, javascriptResourcePaths(resource, security));
  }
  const publicDocs = project.definition.apiDocs?.public === true;
  Object.assign(
    paths,
    metaPaths({
      provider: project.definition.authentication.provider,
      keyed: security.read,
      docsSecurity: publicDocs ? [{}, ...security.read] : security.read,
    }),
  );
  const securitySchemes: Json = {
    [HEADER_SCHEME]: {
      type: "apiKey",
      in: "header",
      name: "Authorization",
      description: `\`<Scheme> <key>:1\`, the Scheme one of ${req.authSchemes.map((s) => `\`${s}\``).join(", ")}. Keys come from \`POST @authentication\`.`,
    },
  };
  if (permitsParameter) {
    securitySchemes[PARAMETER_SCHEME] = {
      type: "apiKey",
      in: "query",
      name: "auth",
      description: "GET only: `<key>:1`.",
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: `${project.account}/${project.name} ${version.name}`,
      version: `${version.name} (definition revision ${project.revision})`,
      description:
        (req.whole
          ? "The whole API of this version."
          : "This version of the API as the key used to fetch this document may use it: the resources, verbs and attributes its roles allow.") +
        (version.scripts.requestEvents.length > 0
          ? ` Request events of this version may refuse any request to a resource with a status from ${REFUSAL_STATUS.min} to ${REFUSAL_STATUS.max} (error codes ${REFUSAL_CODES.min} to ${REFUSAL_CODES.max}).`
          : ""),
    },
    servers: [{ url: collectionHref(addressing, "").replace(/\/$/, "") }],
    security: [header],
    tags: [
      ...tags,
      { name: META_TAG, description: "What the API holds." },
      { name: AUTHENTICATION_TAG, description: "Keys: log in, revalidate, disable." },
    ],
    paths,
    webhooks: WEBHOOKS,
    components: { schemas, parameters: PARAMETERS, responses: COMMON_RESPONSES, securitySchemes },
  };
}
