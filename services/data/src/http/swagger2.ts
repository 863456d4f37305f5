/**
 * The Swagger 2.0 form of an API document (`@docs?format=swagger2`), for the
 * original product's clients and the code generators that read `swagger`,
 * `definitions` and `basePath`. It is made from the OpenAPI 3.1 document
 * (openapi.ts), so both show the same view of the version.
 *
 * What 2.0 cannot say is said as near as it can:
 * - `servers[0]` becomes `host`, `basePath` and `schemes`; `components` become
 *   `definitions`, `parameters`, `responses` and `securityDefinitions`;
 * - a JSON request body becomes a `body` parameter; a response keeps its JSON
 *   schema, and an operation's `produces` lists every media type it answers;
 * - a type list with `null` becomes the type and `x-nullable: true`; `const`
 *   a one-value `enum`; `anyOf` / `oneOf` that only add null the other schema
 *   (nullable), any other the vendor extension `x-anyOf` (no type: any value);
 * - a `$ref` with siblings becomes `allOf: [{$ref}]` with them (2.0 ignores
 *   siblings of `$ref`);
 * - query parameters of repeated values (`style: form`, `explode`) are
 *   `collectionFormat: multi`; a composite key is a `csv` list.
 */
/** Parts of a document, read by the shape openapi.ts gives them. */
// biome-ignore lint/suspicious/noExplicitAny: documents are walked by their known structure, not a type
type Json = Record<string, any>;

const REFS: [string, string][] = [
  ["#/components/schemas/", "#/definitions/"],
  ["#/components/parameters/", "#/parameters/"],
  ["#/components/responses/", "#/responses/"],
];

function mapRef(ref: string): string {
  for (const [from, to] of REFS) if (ref.startsWith(from)) return to + ref.slice(from.length);
  return ref;
}

/** Schema keywords 2.0 has as 3.1 does. */
const KEPT = [
  "title",
  "description",
  "format",
  "default",
  "enum",
  "required",
  "maxLength",
  "minLength",
  "pattern",
  "maximum",
  "minimum",
  "maxItems",
  "minItems",
  "readOnly",
  "example",
];

const isNullType = (s: Json) => s.type === "null";

/** A JSON Schema of the 3.1 document as a 2.0 Schema Object. */
export function schema2(schema: Json): Json {
  if (typeof schema.$ref === "string") {
    const ref = { $ref: mapRef(schema.$ref) };
    const { $ref: _, ...siblings } = schema;
    return Object.keys(siblings).length === 0 ? ref : { ...schema2(siblings), allOf: [ref] };
  }
  const out: Json = {};
  for (const key of KEPT) if (schema[key] !== undefined) out[key] = schema[key];
  for (const [key, value] of Object.entries(schema)) if (key.startsWith("x-")) out[key] = value;
  if (schema.const !== undefined) out.enum = [schema.const];
  if (Array.isArray(schema.type)) {
    const types = (schema.type as string[]).filter((t) => t !== "null");
    if (types.length < schema.type.length) out["x-nullable"] = true;
    if (types.length === 1) out.type = types[0];
  } else if (typeof schema.type === "string" && schema.type !== "null") {
    out.type = schema.type;
  }
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, Json>).map(([name, s]) => [name, schema2(s)]),
    );
  }
  if (schema.additionalProperties !== undefined) {
    out.additionalProperties =
      typeof schema.additionalProperties === "boolean"
        ? schema.additionalProperties
        : schema2(schema.additionalProperties);
  }
  if (schema.items) out.items = schema2(schema.items);
  else if (out.type === "array") out.items = {};
  if (schema.allOf) out.allOf = (schema.allOf as Json[]).map(schema2);
  const choice = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (choice) {
    const members = choice.filter((s) => !isNullType(s)).map(schema2);
    if (members.length < choice.length) out["x-nullable"] = true;
    if (members.length === 1) {
      const [only] = members as [Json];
      Object.assign(out, only.$ref ? { allOf: [only] } : only);
    } else {
      out["x-anyOf"] = members;
    }
  }
  return out;
}

/** A simple (non-body) parameter's type from its 3.1 schema: 2.0 gives such parameters no schema. */
function simpleType(schema: Json): Json {
  const converted = schema2(schema);
  const out: Json = { type: typeof converted.type === "string" ? converted.type : "string" };
  for (const key of [
    "format",
    "enum",
    "default",
    "maximum",
    "minimum",
    "maxLength",
    "minLength",
    "pattern",
  ]) {
    if (converted[key] !== undefined) out[key] = converted[key];
  }
  if (out.type === "array") {
    out.items = simpleType(schema.items ?? {});
    delete out.items.default;
  }
  if (out.type === "object") out.type = "string";
  return out;
}

function parameter2(parameter: Json): Json {
  if (typeof parameter.$ref === "string") return { $ref: mapRef(parameter.$ref) };
  const { name, in: where, description, required, allowEmptyValue } = parameter;
  const out: Json = { name, in: where, ...simpleType(parameter.schema ?? {}) };
  if (description !== undefined) out.description = description;
  if (required !== undefined) out.required = required;
  if (allowEmptyValue !== undefined) out.allowEmptyValue = allowEmptyValue;
  if (out.type === "array")
    out.collectionFormat = parameter.style === "form" && parameter.explode ? "multi" : "csv";
  return out;
}

function response2(response: Json): Json {
  if (typeof response.$ref === "string") return { $ref: mapRef(response.$ref) };
  const out: Json = { description: response.description };
  const schema = response.content?.["application/json"]?.schema;
  if (schema) out.schema = schema2(schema);
  if (response.headers) {
    out.headers = Object.fromEntries(
      Object.entries(response.headers as Record<string, Json>).map(([name, h]) => [
        name,
        { description: h.description, ...simpleType(h.schema ?? {}) },
      ]),
    );
  }
  return out;
}

/** The media types an operation answers (its success responses' content), when not only JSON. */
function producesOf(operation: Json): string[] | undefined {
  const types = new Set<string>();
  for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
    if (status.startsWith("2")) for (const type of Object.keys(response.content ?? {})) types.add(type);
  }
  return types.size > 1 ? [...types] : undefined;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch"];

function operation2(operation: Json): Json {
  const out: Json = {};
  for (const key of ["tags", "summary", "description", "operationId", "security", "deprecated"]) {
    if (operation[key] !== undefined) out[key] = operation[key];
  }
  const parameters = ((operation.parameters ?? []) as Json[]).map(parameter2);
  const body = operation.requestBody;
  if (body) {
    const schema = body.content?.["application/json"]?.schema ?? {};
    parameters.push({ name: "body", in: "body", required: body.required === true, schema: schema2(schema) });
  }
  if (parameters.length > 0) out.parameters = parameters;
  const produces = producesOf(operation);
  if (produces) out.produces = produces;
  out.responses = Object.fromEntries(
    Object.entries(operation.responses as Record<string, Json>).map(([status, r]) => [status, response2(r)]),
  );
  return out;
}

function pathItem2(item: Json): Json {
  const out: Json = {};
  if (item.parameters) out.parameters = (item.parameters as Json[]).map(parameter2);
  for (const method of METHODS) if (item[method]) out[method] = operation2(item[method]);
  return out;
}

const mapValues = (record: Record<string, Json> | undefined, f: (value: Json) => Json): Json =>
  Object.fromEntries(Object.entries(record ?? {}).map(([name, value]) => [name, f(value)]));

/** The Swagger 2.0 document of an OpenAPI 3.1 document made by openapi.ts. */
export function swagger2Document(doc: Json): Json {
  const server = new URL(doc.servers[0].url);
  const components = doc.components ?? {};
  return {
    swagger: "2.0",
    info: { title: doc.info.title, version: doc.info.version, description: doc.info.description },
    host: server.host,
    basePath: server.pathname.replace(/\/$/, "") || "/",
    schemes: [server.protocol.replace(/:$/, "")],
    consumes: ["application/json"],
    produces: ["application/json"],
    security: doc.security,
    tags: doc.tags,
    paths: mapValues(doc.paths, pathItem2),
    definitions: mapValues(components.schemas, schema2),
    parameters: mapValues(components.parameters, parameter2),
    responses: mapValues(components.responses, response2),
    securityDefinitions: mapValues(components.securitySchemes, ({ type, in: where, name, description }) => ({
      type,
      in: where,
      name,
      description,
    })),
  };
}
