/**
 * The parts of the OpenAPI document that every API version shares: query and
 * header parameters, the error, transaction-summary and login bodies, the meta
 * endpoints and `@authentication`. The per-resource parts are in openapi.ts.
 */

import type { AuthenticationDefinition } from "../domain/definition/project-definition.ts";
import { PAGESIZE_DEFAULT, PAGESIZE_MAX } from "../domain/read/query-params.ts";
import { ACTIONS } from "../domain/write/writer.ts";
import { FORMAT_HEADERS, RESPONSE_FORMATS } from "./response-format.ts";

export type Json = Record<string, unknown>;

/** Tags of the endpoints that are not resources; `@` keeps them apart from resource names. */
export const META_TAG = "@meta";
export const AUTHENTICATION_TAG = "@authentication";

export const ref = (kind: "schemas" | "parameters" | "responses", name: string): Json => ({
  $ref: `#/components/${kind}/${name}`,
});

const repeatable = (description: string): Json => ({
  in: "query",
  description,
  schema: { type: "array", items: { type: "string" } },
  style: "form",
  explode: true,
});

const flag = (description: string, fallback: boolean): Json => ({
  in: "query",
  description,
  schema: { type: "boolean", default: fallback },
});

export const PARAMETERS: Record<string, Json> = {
  filter: {
    name: "filter",
    ...repeatable(
      "A filter expression, e.g. `balance > 100 and region = 'west'`. Repeated filters AND together.",
    ),
  },
  order: {
    name: "order",
    ...repeatable("`attribute [asc|desc], …`; the key is always the last tie-breaker."),
  },
  sysfilter: {
    name: "sysfilter",
    ...repeatable("The original product's structured filter, e.g. `equal(region:'west')`."),
  },
  sysorder: {
    name: "sysorder",
    ...repeatable("The original product's structured order, e.g. `(name:desc)`."),
  },
  pagesize: {
    name: "pagesize",
    in: "query",
    description: "Objects per page, also per nested level.",
    schema: { type: "integer", minimum: 1, maximum: PAGESIZE_MAX, default: PAGESIZE_DEFAULT },
  },
  offset: {
    name: "offset",
    in: "query",
    description: "Set by the server in `next_batch`; follow that URL instead of computing it.",
    schema: { type: "integer", minimum: 0 },
  },
  pagekey: {
    name: "pagekey",
    in: "query",
    description: "An opaque position set by the server in `next_batch`.",
    schema: { type: "string" },
  },
  parent: {
    name: "parent",
    in: "query",
    description:
      "On a nested resource of children: the key of the parent row (as in an object URL) whose children to list. Set by the server in a nested `next_batch`.",
    schema: { type: "string" },
  },
  nometa: { name: "nometa", ...flag("`true` leaves out `@metadata`.", false) },
  responseformat: {
    name: "responseformat",
    in: "query",
    description:
      "The answer's format; beats the format headers, which beat the API version's default (JSON unless the version sets another). `jsonObject` puts the JSON answer under `data`. Errors are always JSON.",
    schema: { type: "string", enum: [...RESPONSE_FORMATS] },
  },
  ...Object.fromEntries(
    FORMAT_HEADERS.map((name) => [
      name,
      {
        name,
        in: "header",
        description: "The answer's format (the original product's header; `responseformat` beats it).",
        schema: { type: "string", enum: [...RESPONSE_FORMATS] },
      },
    ]),
  ),
  txsummary: { name: "txsummary", ...flag("`false` leaves out the transaction summary.", true) },
  rulesummary: { name: "rulesummary", ...flag("`true` adds the rules that fired per object.", false) },
  checksum: {
    name: "checksum",
    in: "query",
    required: true,
    description: "The object's `@metadata.checksum` as last read (409 when it changed), or `override`.",
    schema: { type: "string" },
  },
  ignoredeleted: {
    name: "ignoredeleted",
    ...flag("Deleting an object that does not exist answers 200 with an empty summary.", false),
  },
  lastEventId: {
    name: "Last-Event-ID",
    in: "header",
    required: false,
    description: "Live queries only: resume after this change-feed position, without a snapshot.",
    schema: { type: "string", pattern: "^[0-9]+-[0-9]+$" },
  },
  enablePasswordChange: {
    name: "enablePasswordChange!",
    in: "query",
    description: "Present (no value needed): the login also changes the password to `newPassword`.",
    allowEmptyValue: true,
    schema: { type: "string" },
  },
};

export const FORMAT_PARAMETERS = ["responseformat", ...FORMAT_HEADERS];
export const READ_ONE_PARAMETERS = ["nometa", ...FORMAT_PARAMETERS];
export const READ_LIST_PARAMETERS = [
  "filter",
  "order",
  "sysfilter",
  "sysorder",
  "pagesize",
  "offset",
  "pagekey",
  ...READ_ONE_PARAMETERS,
];
/** Lists of a nested resource of children also take `parent`. */
export const READ_CHILDREN_PARAMETERS = [...READ_LIST_PARAMETERS, "parent"];
export const WRITE_PARAMETERS = ["txsummary", "rulesummary"];
export const DELETE_PARAMETERS = ["checksum", "ignoredeleted", ...WRITE_PARAMETERS];

const string = { type: "string" };

/** `@metadata` of an object written; the action defaults to the verb's (POST: INSERT, PUT: UPDATE). */
function writeMetadata(verbAction: (typeof ACTIONS)[number]): Json {
  return {
    type: "object",
    description: "Other entries (such as `href` and `links` of an object read before) are ignored.",
    properties: {
      action: {
        type: "string",
        enum: [verbAction, ...ACTIONS.filter((a) => a !== verbAction)],
        default: verbAction,
      },
      checksum: {
        type: "string",
        description: "UPDATE and DELETE: the checksum as last read (409 when it changed), or `override`.",
      },
      key: {
        description: "MERGE_INSERT and LOOKUP: the attribute(s) that find the object.",
        anyOf: [string, { type: "array", items: string }],
      },
      href: { type: "string", description: "Addresses the object when its key attributes are not sent." },
    },
  };
}
const nextBatch = { type: "string", format: "uri" };

export const COMMON_SCHEMAS: Record<string, Json> = {
  Error: {
    type: "object",
    description: "Every error, whatever the response format asked for.",
    required: ["statusCode", "errorCode", "errorMessage"],
    properties: {
      statusCode: { type: "integer" },
      errorCode: { type: "integer", description: "Four digits; the first three are the HTTP status." },
      errorMessage: string,
      requestId: { type: "string", description: "Also in the X-Request-Id header and the service logs." },
      problems: {
        type: "array",
        items: { type: "object", properties: { path: string, message: string } },
      },
    },
  },
  NextBatch: {
    type: "object",
    description: "The last element of a page when more objects exist: follow `next_batch` as it is.",
    required: ["@metadata"],
    additionalProperties: false,
    properties: {
      "@metadata": {
        type: "object",
        required: ["next_batch"],
        properties: { next_batch: nextBatch },
      },
    },
  },
  ChildLink: {
    type: "object",
    required: ["rel", "role", "href"],
    properties: { rel: { const: "children" }, role: string, href: { type: "string", format: "uri" } },
  },
  RowMetadata: {
    type: "object",
    required: ["href", "checksum"],
    properties: {
      href: { type: "string", format: "uri", description: "The object's own URL." },
      checksum: {
        type: "string",
        description: "Changes with every change of the object; send it back to update.",
      },
      links: { type: "array", items: ref("schemas", "ChildLink") },
    },
  },
  JavaScriptAnswer: {
    description: "What the resource's code answers: an array or an object.",
    anyOf: [{ type: "array" }, { type: "object" }],
  },
  InsertMetadata: writeMetadata("INSERT"),
  UpdateMetadata: writeMetadata("UPDATE"),
  TxSummaryEntry: {
    type: "object",
    description: "An object the request changed, in its final state (the attributes the key may read).",
    required: ["@metadata"],
    properties: {
      "@metadata": {
        type: "object",
        required: ["href", "resource", "verb"],
        properties: {
          href: { type: "string", format: "uri" },
          resource: string,
          verb: { type: "string", enum: ["INSERT", "UPDATE", "DELETE"] },
          checksum: { type: "string", description: "Absent for DELETE." },
        },
      },
    },
  },
  RuleSummaryEntry: {
    type: "object",
    properties: {
      "@metadata": { type: "object", properties: { href: string, resource: string, verb: string } },
      rules: { type: "array", items: {} },
    },
  },
  TransactionSummary: {
    type: "object",
    description: "The answer to every write: every object changed, once, the object written first.",
    required: ["statusCode"],
    properties: {
      statusCode: { type: "integer", enum: [200, 201] },
      txsummary: { type: "array", items: ref("schemas", "TxSummaryEntry") },
      rulesummary: { type: "array", items: ref("schemas", "RuleSummaryEntry") },
    },
  },
  Revalidate: {
    type: "object",
    description: "Checks a key; nothing changes.",
    required: ["apikey"],
    properties: { apikey: string, disable: { const: false } },
  },
  Disable: {
    type: "object",
    description: "Disables a key for good.",
    required: ["apikey", "disable"],
    properties: { apikey: string, disable: { const: true } },
  },
  KeyAnswer: {
    type: "object",
    description: "A login (a new key every time) or a revalidation (the key's original expiry).",
    required: ["apikey", "expiration", "userIdentifier", "roles"],
    properties: {
      apikey: string,
      expiration: {
        type: ["string", "null"],
        description: "UTC `YYYY-MM-DDTHH:mm:ss.SSS`, without a zone; null for a key that never expires.",
      },
      userIdentifier: string,
      roles: { type: "array", items: string },
      userInfo: { type: "object" },
      changePasswordResult: { type: "string", enum: ["success", "failure", "notSupported"] },
      changePasswordMessage: string,
    },
  },
  DisableAnswer: {
    type: "object",
    required: ["apikey", "disabled"],
    properties: { apikey: string, disabled: { const: true } },
  },
  LoginInfo: {
    type: "object",
    description: "The login form's fields.",
    properties: {
      fields: {
        type: "array",
        items: {
          type: "object",
          properties: {
            name: string,
            display: string,
            type: string,
            description: string,
            length: { type: "integer" },
          },
        },
      },
      links: { type: "array", items: { type: "object", properties: { display: string, href: string } } },
    },
  },
};

/** The login body: the built-in provider's fields, an `oidc` provider's token, or a custom provider's own (see `GET @authentication`). */
export function credentialsSchema(provider: AuthenticationDefinition["provider"]): Json {
  const passwordChange = {
    newPassword: { type: "string", description: "With `?enablePasswordChange!`: the new password." },
    new_password: { type: "string", description: "Another name for `newPassword`." },
  };
  if (provider === "oidc") {
    const token = (what: string) => ({ type: "string", format: "password", description: `${what} (a JWT).` });
    return {
      type: "object",
      description: "A token of the project's OpenID Connect issuer: `id_token` or `access_token`, not both.",
      properties: { id_token: token("An ID token"), access_token: token("An access token") },
    };
  }
  if (provider === "custom") {
    return {
      type: "object",
      description: "The fields the project's authentication provider asks for (`GET @authentication`).",
      additionalProperties: true,
      properties: passwordChange,
    };
  }
  return {
    type: "object",
    required: ["username", "password"],
    properties: { username: string, password: { type: "string", format: "password" }, ...passwordChange },
  };
}

const errorResponse = (description: string): Json => ({
  description,
  content: { "application/json": { schema: ref("schemas", "Error") } },
});

export const COMMON_RESPONSES: Record<string, Json> = {
  BadRequest: errorResponse(
    "The request is malformed (4001), a filter or order does not parse (4002), an attribute is wrong (4003) or a rule refused it (4004).",
  ),
  Unauthorized: errorResponse(
    "No key, or the key is unknown (4011), of another project (4012), expired (4013) or disabled (4014).",
  ),
  Forbidden: errorResponse("The key's roles do not allow this (4031)."),
  NotFound: errorResponse("No such resource or object (4041)."),
  Conflict: errorResponse(
    "The checksum does not match: someone changed the object since it was read (4091).",
  ),
  TooLarge: errorResponse("The body is larger than the server accepts (4131)."),
  UnsupportedMediaType: errorResponse("The body is not sent as `application/json` (4151)."),
  ScriptFailed: errorResponse(
    "The project's JavaScript failed (5001): it threw, ran past its time or memory limit, or answered what it may not.",
  ),
  Unavailable: errorResponse("The JavaScript sandbox or a store is unavailable (5031)."),
  TooManyAttempts: {
    ...errorResponse("Too many failed logins for this user name (4291)."),
    headers: { "Retry-After": { description: "Seconds to wait.", schema: { type: "integer" } } },
  },
};

export const READ_ERRORS = {
  "400": ref("responses", "BadRequest"),
  "401": ref("responses", "Unauthorized"),
  "403": ref("responses", "Forbidden"),
  "404": ref("responses", "NotFound"),
};

export const WRITE_ERRORS = {
  ...READ_ERRORS,
  "409": ref("responses", "Conflict"),
  "413": ref("responses", "TooLarge"),
  "415": ref("responses", "UnsupportedMediaType"),
};

const json = (schema: Json) => ({ "application/json": { schema } });

/** The forms of a GET answer: JSON, XML and (for lists) CSV. */
export function formattedContent(schema: Json, csv = true): Json {
  const text = (description: string) => ({ schema: { type: "string", description } });
  const xml = text("The JSON answer as XML, under `<response>`.");
  if (!csv) return { ...json(schema), "application/xml": xml };
  return {
    ...json(schema),
    "text/csv": text(
      "One header row, one row per object; parent objects flattened, child collections left out.",
    ),
    "application/xml": xml,
  };
}

const listOf = (properties: Json, required: string[]) => ({
  type: "array",
  items: { type: "object", required, properties },
});

/** Paths of the meta endpoints and `@authentication`, relative to the version's URL. */
export function metaPaths(options: {
  provider: AuthenticationDefinition["provider"];
  keyed: Json[];
  docsSecurity: Json[];
}): Json {
  const noKey: Json[] = [];
  const meta = { tags: [META_TAG] };
  const href = { type: "object", properties: { href: { type: "string", format: "uri" } } };
  return {
    "/@heartbeat": {
      get: {
        ...meta,
        operationId: "heartbeat",
        summary: "Is the service up",
        security: noKey,
        responses: {
          "200": {
            description: "Up.",
            content: formattedContent(
              { type: "object", properties: { status: string, time: string } },
              false,
            ),
          },
        },
      },
    },
    "/@license": {
      get: {
        ...meta,
        operationId: "license",
        summary: "Product and licence",
        security: noKey,
        responses: {
          "200": { description: "The licence.", content: formattedContent({ type: "object" }, false) },
        },
      },
    },
    "/@tables": {
      get: {
        ...meta,
        operationId: "listTables",
        summary: "The project's tables",
        security: options.keyed,
        parameters: FORMAT_PARAMETERS.map((p) => ref("parameters", p)),
        responses: {
          "200": {
            description: "One entry per table.",
            content: formattedContent(
              listOf({ name: string, prefix: string, entity: string, "@metadata": href }, ["name"]),
            ),
          },
          ...READ_ERRORS,
        },
      },
    },
    "/@tables/{table}": {
      get: {
        ...meta,
        operationId: "describeTable",
        summary: "A table's columns, key, parents and children",
        security: options.keyed,
        parameters: [
          { name: "table", in: "path", required: true, schema: string },
          ...FORMAT_PARAMETERS.map((p) => ref("parameters", p)),
        ],
        responses: {
          "200": { description: "The table.", content: formattedContent({ type: "object" }, false) },
          ...READ_ERRORS,
        },
      },
    },
    "/@resources": {
      get: {
        ...meta,
        operationId: "listResources",
        summary: "The version's custom resources",
        security: options.keyed,
        parameters: FORMAT_PARAMETERS.map((p) => ref("parameters", p)),
        responses: {
          "200": {
            description: "One entry per custom resource.",
            content: formattedContent(
              listOf({ name: string, resource_type: string, apiVersion: string, table: string }, ["name"]),
            ),
          },
          ...READ_ERRORS,
        },
      },
    },
    "/@docs": {
      get: {
        ...meta,
        operationId: "apiDocs",
        summary: "This document",
        description:
          "Shows what the key may do; a role with `apiDocs` sees everything. OpenAPI 3.1, or Swagger 2.0 with `format=swagger2` (or `Accept: application/swagger+json`).",
        security: options.docsSecurity,
        parameters: [
          {
            name: "format",
            in: "query",
            description:
              "The document's format: OpenAPI 3.1 (`openapi3`, the default) or Swagger 2.0 (`swagger2`).",
            schema: { type: "string", enum: ["openapi3", "swagger2"] },
          },
        ],
        responses: {
          "200": {
            description: "An OpenAPI 3.1 or Swagger 2.0 document.",
            content: json({ type: "object" }),
          },
          ...READ_ERRORS,
        },
      },
    },
    "/@authentication": {
      get: {
        tags: [AUTHENTICATION_TAG],
        operationId: "loginInfo",
        summary: "The fields a login needs",
        security: noKey,
        responses: { "200": { description: "The fields.", content: json(ref("schemas", "LoginInfo")) } },
      },
      post: {
        tags: [AUTHENTICATION_TAG],
        operationId: "authenticate",
        summary: "Log in (a new key every time), revalidate or disable a key, change a password",
        security: noKey,
        parameters: [ref("parameters", "enablePasswordChange")],
        requestBody: {
          required: true,
          content: json({
            anyOf: [
              credentialsSchema(options.provider),
              ref("schemas", "Revalidate"),
              ref("schemas", "Disable"),
            ],
          }),
        },
        responses: {
          "200": {
            description: "The key: a new one after a login; the same after a revalidation or disable.",
            content: json({ anyOf: [ref("schemas", "KeyAnswer"), ref("schemas", "DisableAnswer")] }),
          },
          "400": ref("responses", "BadRequest"),
          "401": errorResponse(
            "Login failed (4015, one answer whatever the reason), or the key to revalidate is unknown, expired or disabled.",
          ),
          "403": errorResponse(
            "The project has as many API keys in force as the account's plan allows (4032, with `quota`): no key was made.",
          ),
          "404": errorResponse("No such project or version, or the key to disable does not exist (4042)."),
          "415": ref("responses", "UnsupportedMediaType"),
          "429": ref("responses", "TooManyAttempts"),
        },
      },
    },
  };
}
