/**
 * The document `@docs` answers: the caller's view of the version (the whole API
 * for a role with `apiDocs` or a keyless request to a project that publishes
 * its documents), as OpenAPI 3.1 or, on request, Swagger 2.0 (swagger2.ts),
 * built and serialised once per project model, version, view, base URL and
 * format.
 * A project model is replaced by a new one whenever its definition changes, so
 * documents kept with it never go stale; a few per model are kept, since the
 * base URL can come from the request's Host header.
 */
import { errors } from "../../../../shared/errors.ts";
import type { ProjectModel, VersionModel } from "../domain/model/project-model.ts";
import { mayCall } from "../domain/model/script-model.ts";
import type { Principal } from "../domain/read/authorization.ts";
import type { Addressing } from "../domain/read/representation.ts";
import { fullAccess, hasApiDocsRole, keyAccess } from "./access-view.ts";
import { openApiDocument } from "./openapi.ts";
import { swagger2Document } from "./swagger2.ts";

export const DOCS_FORMATS = ["openapi3", "swagger2"] as const;
export type DocsFormat = (typeof DOCS_FORMATS)[number];

/** The media type that asks for Swagger 2.0 in `Accept` (the answer itself is `application/json`). */
export const SWAGGER2_MEDIA_TYPE = "application/swagger+json";

/**
 * The document format a request asks for: `?format=openapi3|swagger2`, else
 * Swagger 2.0 when `Accept` prefers SWAGGER2_MEDIA_TYPE to JSON, else OpenAPI 3.1.
 * `preferred` is the Accept negotiation (koa's `ctx.accepts`).
 */
export function docsFormat(
  param: string | undefined,
  preferred: (types: string[]) => string | false,
): DocsFormat {
  if (param !== undefined) {
    const format = DOCS_FORMATS.find((f) => f === param.trim().toLowerCase());
    if (!format)
      throw errors.malformed(`Parameter 'format' must be one of ${DOCS_FORMATS.join(", ")} (not '${param}')`);
    return format;
  }
  return preferred(["application/json", SWAGGER2_MEDIA_TYPE]) === SWAGGER2_MEDIA_TYPE
    ? "swagger2"
    : "openapi3";
}

const DOCUMENTS_PER_MODEL = 32;
const documents = new WeakMap<ProjectModel, Map<string, string>>();

export interface ApiDocsRequest {
  project: ProjectModel;
  version: VersionModel;
  addressing: Addressing;
  /** The key's principal; absent for a keyless request to a project with public documents. */
  principal?: Principal;
  authSchemes: string[];
  format: DocsFormat;
}

/** The document as JSON text. */
export function apiDocument(req: ApiDocsRequest): string {
  // The key whose document is its own part of the API; none when the document is the whole API.
  const keyed = req.principal && !hasApiDocsRole(req.project, req.principal) ? req.principal : undefined;
  const whole = !keyed;
  const view = !keyed
    ? "*"
    : keyed.administrator
      ? "account reader"
      : JSON.stringify([...keyed.roles].sort());
  const id = JSON.stringify([req.version.name, view, req.addressing.restBase, req.format]);
  let kept = documents.get(req.project);
  if (!kept) {
    kept = new Map();
    documents.set(req.project, kept);
  }
  let document = kept.get(id);
  if (!document) {
    const openApi = openApiDocument({
      project: req.project,
      version: req.version,
      addressing: req.addressing,
      access: keyed ? keyAccess(req.project, keyed) : fullAccess,
      mayCall: (resource) => !keyed || mayCall(resource, keyed),
      whole,
      authSchemes: req.authSchemes,
    });
    document = JSON.stringify(req.format === "swagger2" ? swagger2Document(openApi) : openApi);
    if (kept.size >= DOCUMENTS_PER_MODEL) kept.clear();
    kept.set(id, document);
  }
  return document;
}
