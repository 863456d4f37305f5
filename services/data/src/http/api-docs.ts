/**
 * The document `@docs` answers: the caller's view of the version (the whole API
 * for a role with `apiDocs` or a keyless request to a project that publishes
 * its documents), built and serialised once per project model, version, view
 * and base URL.
 * A project model is replaced by a new one whenever its definition changes, so
 * documents kept with it never go stale; a few per model are kept, since the
 * base URL can come from the request's Host header.
 */
import type { Principal } from "../domain/authorization.ts";
import type { ProjectModel, VersionModel } from "../domain/project-model.ts";
import type { Addressing } from "../domain/representation.ts";
import { mayCall } from "../domain/script-model.ts";
import { fullAccess, hasApiDocsRole, keyAccess } from "./access-view.ts";
import { openApiDocument } from "./openapi.ts";

const DOCUMENTS_PER_MODEL = 32;
const documents = new WeakMap<ProjectModel, Map<string, string>>();

export interface ApiDocsRequest {
  project: ProjectModel;
  version: VersionModel;
  addressing: Addressing;
  /** The key's principal; absent for a keyless request to a project with public documents. */
  principal?: Principal;
  authSchemes: string[];
}

/** The document as JSON text. */
export function apiDocument(req: ApiDocsRequest): string {
  const whole = !req.principal || hasApiDocsRole(req.project, req.principal);
  const view = whole ? "*" : JSON.stringify([...req.principal!.roles].sort());
  const id = JSON.stringify([req.version.name, view, req.addressing.restBase]);
  let kept = documents.get(req.project);
  if (!kept) {
    kept = new Map();
    documents.set(req.project, kept);
  }
  let document = kept.get(id);
  if (!document) {
    document = JSON.stringify(
      openApiDocument({
        project: req.project,
        version: req.version,
        addressing: req.addressing,
        access: whole ? fullAccess : keyAccess(req.project, req.principal!),
        mayCall: (resource) => whole || mayCall(resource, req.principal!.roles),
        whole,
        authSchemes: req.authSchemes,
      }),
    );
    if (kept.size >= DOCUMENTS_PER_MODEL) kept.clear();
    kept.set(id, document);
  }
  return document;
}
