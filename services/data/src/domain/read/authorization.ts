/**
 * What a key's roles allow on a table: roles add up. For each role the table's
 * own entry wins over its `*` entry. A permission is restricted by row filters
 * (ORed across the granting roles; any unrestricted grant lifts them) and by a
 * column list (united; any grant without a list shows every column).
 */
import { errors } from "../../../../../shared/errors.ts";
import type { KeyRecord } from "../../../../../shared/keys/key-record.ts";
import type { AccessLevel } from "../definition/project-definition.ts";
import type { ProjectModel, RoleTableAccess, TableModel } from "../model/project-model.ts";

export interface Permission {
  /** null = every row; otherwise the row must satisfy at least one of these filters. */
  rowFilters: string[] | null;
  /** null = every column. */
  columns: Set<string> | null;
}

export interface Principal {
  roles: string[];
  globals: Record<string, unknown>;
}

export function principalOf(record: KeyRecord, project: ProjectModel): Principal {
  return {
    roles: record.roles,
    globals: {
      ...record.globals,
      "_apikey.user_identifier": record.userIdentifier,
      "_project.name": project.name,
      "_account.name": project.account,
    },
  };
}

export function permissionFor(
  project: ProjectModel,
  principal: Principal,
  table: TableModel,
  level: AccessLevel,
): Permission | null {
  const grants: RoleTableAccess[] = [];
  for (const roleName of principal.roles) {
    const role = project.roles.get(roleName);
    const entry = role?.tables.get(table.name) ?? role?.tables.get("*");
    if (entry?.access.has(level)) grants.push(entry);
  }
  if (grants.length === 0) return null;
  const unrestrictedRows = grants.some((g) => !g.rowFilter);
  const allColumns = grants.some((g) => !g.columns);
  return {
    rowFilters: unrestrictedRows ? null : grants.map((g) => g.rowFilter!),
    columns: allColumns ? null : new Set(grants.flatMap((g) => [...g.columns!])),
  };
}

export function requirePermission(
  project: ProjectModel,
  principal: Principal,
  table: TableModel,
  level: AccessLevel,
): Permission {
  const permission = permissionFor(project, principal, table, level);
  if (!permission) throw errors.forbidden(`The key's roles do not allow ${level} on '${table.name}'`);
  return permission;
}
