/**
 * What a caller may do, as the documents and formats of the read layer ask it:
 * per table and access level, the permission (or none). A key's view follows its
 * roles; the full view (a role with `apiDocs`, or public docs read without a key)
 * allows everything, every column.
 */

import type { AccessLevel } from "../domain/definition/project-definition.ts";
import type { ProjectModel, TableModel } from "../domain/model/project-model.ts";
import { type Permission, type Principal, permissionFor } from "../domain/read/authorization.ts";

export type AccessView = (table: TableModel, level: AccessLevel) => Permission | null;

export function keyAccess(project: ProjectModel, principal: Principal): AccessView {
  return (table, level) => permissionFor(project, principal, table, level);
}

const EVERYTHING: Permission = { rowFilters: null, columns: null };

export const fullAccess: AccessView = () => EVERYTHING;

/**
 * True when the key sees the whole API document: an account `admin`'s, or one of
 * its roles has `"apiDocs": true` (an account `reader`'s view is every read).
 */
export function hasApiDocsRole(project: ProjectModel, principal: Principal): boolean {
  if (principal.administrator) return principal.administrator.role === "admin";
  return principal.roles.some((role) => project.definition.roles[role]?.apiDocs === true);
}

/** The caller's view: everything with an `apiDocs` role, else what its roles grant. */
export function callerAccess(project: ProjectModel, principal: Principal): AccessView {
  return hasApiDocsRole(project, principal) ? fullAccess : keyAccess(project, principal);
}
