/**
 * What a key's roles allow on a table: roles add up. For each role the table's
 * own entry wins over its `*` entry. A permission is restricted by row filters
 * (ORed across the granting roles; any unrestricted grant lifts them) and by a
 * column list (united; any grant without a list shows every column).
 * An account administrator's key has no project roles: its administrator's role
 * decides — `admin` may do everything on every table, `reader` read every table,
 * every row and column (docs/data-api.md#administrators-keys).
 */
import { errors } from "../../../../../shared/errors.ts";
import type { AdminRole, KeyRecord } from "../../../../../shared/keys/key-record.ts";
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
  /** Set when the key is an account administrator's: their login and current role. */
  administrator?: { login: string; role: AdminRole };
}

export function principalOf(record: KeyRecord, project: ProjectModel): Principal {
  if (record.admin) {
    const { login, role } = record.admin;
    return {
      roles: [],
      globals: {
        "_apikey.user_identifier": login,
        "_admin.login": login,
        "_project.name": project.name,
        "_account.name": project.account,
      },
      administrator: { login, role },
    };
  }
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

const EVERYTHING: Permission = { rowFilters: null, columns: null };

export function permissionFor(
  project: ProjectModel,
  principal: Principal,
  table: TableModel,
  level: AccessLevel,
): Permission | null {
  if (principal.administrator) {
    return principal.administrator.role === "admin" || level === "read" ? EVERYTHING : null;
  }
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
    rowFilters: unrestrictedRows ? null : grants.flatMap((g) => (g.rowFilter ? [g.rowFilter] : [])),
    columns: allColumns ? null : new Set(grants.flatMap((g) => [...(g.columns ?? [])])),
  };
}

export function requirePermission(
  project: ProjectModel,
  principal: Principal,
  table: TableModel,
  level: AccessLevel,
): Permission {
  const permission = permissionFor(project, principal, table, level);
  if (!permission && principal.administrator)
    throw errors.forbidden(`A reader of the account may only read: no ${level} on '${table.name}'`);
  if (!permission) throw errors.forbidden(`The key's roles do not allow ${level} on '${table.name}'`);
  return permission;
}
