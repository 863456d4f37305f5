/**
 * The export's roles, API keys and users. A role's `default_permission` (letters:
 * A all, R read, I insert, U update, D delete, N none) becomes its grant on every
 * table (`*`); each `TablePermissions` entry a grant on its table with its SQL
 * `predicate` as the row filter (`"Region" = '@{UserRegion}'` → `Region =
 * @{UserRegion}`) and its `column_names` as the columns shown. API keys keep
 * their roles (`ApiKeyRoles`), globals (`data`: one `name=value` a line) and
 * user identifier, and their value where it may be kept. Users keep their roles
 * and globals, and their LAC password hash, which Tessera verifies at the first
 * login and replaces with an argon2id hash then (credentials/lac-passwords.ts).
 */
import { MANUAL_KEY_PATTERN } from "../../../../../shared/key-format.ts";
import { isNameOf } from "../../../../../shared/names.ts";
import type { AccessLevel, RoleDefinition } from "../definition/project-definition.ts";
import { exportPath, type ImportReport } from "./import-report.ts";
import type { LacProject } from "./lac-export.ts";
import type { MappedSchema } from "./schema-mapping.ts";
import { sqlFilter } from "./sql-predicates.ts";

export interface ImportedKey {
  /** `$.ApiKeys[i]`. */
  source: string;
  name: string;
  description?: string;
  roles: string[];
  globals: Record<string, string>;
  userIdentifier?: string;
  /** ISO 8601, when the key expires. */
  expiration?: string;
  /** The key's value from the export, when it is kept (otherwise a new one is made). */
  keepValue?: string;
}

export interface ImportedUser {
  source: string;
  username: string;
  roles: string[];
  globals: Record<string, string>;
  keyLifetimeSeconds?: number;
  /** LAC's hash and salt (base64), verified at the first login; absent: the user has no usable password. */
  lacPassword?: { hash: string; salt: string };
}

export interface KeyValuePolicy {
  /** Keep the export's key values (clients hold them); otherwise every key gets a new value. */
  keepKeyValues: boolean;
  now: number;
}

const LETTERS: Record<string, AccessLevel[]> = {
  A: ["read", "insert", "update", "delete"],
  R: ["read"],
  I: ["insert"],
  U: ["update"],
  D: ["delete"],
  N: [],
};

/** Access letters (`A`, `RIU`, `N`) as access levels; unknown letters are reported. */
function access(letters: string | null | undefined, where: string, report: ImportReport): AccessLevel[] {
  const levels = new Set<AccessLevel>();
  for (const letter of (letters ?? "N").toUpperCase()) {
    const mapped = LETTERS[letter];
    if (mapped) for (const level of mapped) levels.add(level);
    else report.add(where, `access letter '${letter}' has no counterpart (A, R, I, U, D, N are kept)`);
  }
  return ["read", "insert", "update", "delete"].filter((l) => levels.has(l as AccessLevel)) as AccessLevel[];
}

export function mapRoles(
  project: LacProject,
  schema: MappedSchema,
  report: ImportReport,
): Record<string, RoleDefinition> {
  const roles: Record<string, RoleDefinition> = {};
  project.Roles.forEach((role, index) => {
    const where = exportPath("Roles", index);
    if (!isNameOf("role", role.name)) {
      report.add(
        where,
        `role '${role.name}' is not a Tessera role name (1 to 100 characters, no control characters); left out`,
      );
      return;
    }
    const tables: RoleDefinition["tables"] = {};
    const everywhere = access(role.default_permission, `${where}.default_permission`, report);
    if (everywhere.length > 0) tables["*"] = { access: everywhere };
    const visibility = (role.default_apivisibility ?? "TVRPM").toUpperCase();
    const hidden = [...["T", "V", "R", "M"]].filter((l) => !visibility.includes(l));
    if (hidden.length > 0) {
      report.add(
        `${where}.default_apivisibility`,
        `'${role.default_apivisibility}' hides kinds of endpoints (${hidden.join(", ")}); Tessera roles see every resource over the tables they may read`,
      );
    }
    if (role.PermissionData.length > 0)
      report.add(
        `${where}.PermissionData`,
        "resource-level permissions have no counterpart; the role's table grants decide",
      );
    if (role.ApiVisibility.length > 0)
      report.add(
        `${where}.ApiVisibility`,
        "per-endpoint visibility has no counterpart; the role's table grants decide",
      );
    role.TablePermissions.forEach((permission, pIndex) => {
      const pWhere = `${where}.TablePermissions[${pIndex}]`;
      const table = schema.table(permission.entity_name);
      if (!table) {
        report.add(pWhere, `table '${permission.entity_name}' is not in the schema; the grant is left out`);
        return;
      }
      const grant: RoleDefinition["tables"][string] = {
        access: access(permission.access_type, `${pWhere}.access_type`, report),
      };
      if (permission.predicate && permission.predicate.trim() !== "") {
        const filter = sqlFilter(permission.predicate, (name) => schema.column(table, name));
        if (!filter.ok) {
          report.add(
            `${pWhere}.predicate`,
            `the row filter cannot be translated (${filter.reason}); the grant is left out, so the role does not reach '${table.source.name}' through it`,
          );
          return;
        }
        grant.rowFilter = filter.text;
      }
      if (permission.column_names && permission.column_names.trim() !== "") {
        const columns: string[] = [];
        for (const name of permission.column_names
          .split(",")
          .map((c) => c.trim())
          .filter((c) => c !== "")) {
          const own = schema.column(table, name);
          if (own) columns.push(own);
          else report.add(`${pWhere}.column_names`, `'${table.source.name}' has no column '${name}'`);
        }
        for (const key of table.definition.key) {
          if (!columns.includes(key)) {
            columns.push(key);
            report.add(
              `${pWhere}.column_names`,
              `key column '${key}' is shown too: Tessera's column lists include the key`,
            );
          }
        }
        grant.columns = columns;
      }
      tables[table.name] = grant;
    });
    roles[role.name] = { ...(role.description ? { description: role.description } : {}), tables };
  });
  return roles;
}

/** LAC's globals text: one `name=value` a line (or `;`-separated); other lines are reported. */
export function globalsOf(
  data: string | null | undefined,
  where: string,
  report: ImportReport,
): Record<string, string> {
  const globals: Record<string, string> = {};
  for (const line of (data ?? "").split(/\r?\n|;/)) {
    if (line.trim() === "") continue;
    const eq = line.indexOf("=");
    const name = eq === -1 ? "" : line.slice(0, eq).trim();
    if (!/^[A-Za-z0-9_.-]{1,200}$/.test(name)) {
      report.add(where, `'${line.trim()}' is not a global of the form name=value; left out`);
      continue;
    }
    globals[name] = line.slice(eq + 1).trim();
  }
  return globals;
}

function rolesNamed(
  names: string[],
  roles: Record<string, RoleDefinition>,
  where: string,
  report: ImportReport,
): string[] {
  const known = names.filter((n) => Object.hasOwn(roles, n));
  for (const n of names)
    if (!known.includes(n)) report.add(where, `role '${n}' is not imported; left out of its roles`);
  return [...new Set(known)];
}

export function mapKeys(
  project: LacProject,
  roles: Record<string, RoleDefinition>,
  policy: KeyValuePolicy,
  report: ImportReport,
): ImportedKey[] {
  const rolesByKey = new Map<number, string[]>();
  for (const role of project.Roles) {
    for (const link of role.ApiKeyRoles)
      rolesByKey.set(link.apikey_ident, [...(rolesByKey.get(link.apikey_ident) ?? []), role.name]);
  }
  const keys: ImportedKey[] = [];
  project.ApiKeys.forEach((key, index) => {
    const where = exportPath("ApiKeys", index);
    if (key.status && key.status.toUpperCase() !== "A") {
      report.add(`${where}.status`, `key '${key.name}' is not active (status ${key.status}); left out`);
      return;
    }
    let expiration: string | undefined;
    if (key.expiration) {
      const at = Date.parse(
        /(Z|[+-]\d{2}:?\d{2})$/.test(key.expiration) ? key.expiration : `${key.expiration}Z`,
      );
      if (Number.isNaN(at))
        report.add(`${where}.expiration`, `'${key.expiration}' is not a date; the key does not expire`);
      else if (at <= policy.now) {
        report.add(`${where}.expiration`, `key '${key.name}' expired on ${key.expiration}; left out`);
        return;
      } else expiration = new Date(at).toISOString();
    }
    if (key.logging) report.add(`${where}.logging`, `per-key logging ('${key.logging}') has no counterpart`);
    const imported: ImportedKey = {
      source: where,
      name: key.name.slice(0, 200),
      roles: rolesNamed(key.ident == null ? [] : (rolesByKey.get(key.ident) ?? []), roles, where, report),
      globals: globalsOf(key.data, `${where}.data`, report),
    };
    if (key.description) imported.description = key.description.slice(0, 2000);
    if (key.user_identifier) imported.userIdentifier = key.user_identifier.slice(0, 200);
    if (expiration) imported.expiration = expiration;
    if (key.apikey) {
      if (!policy.keepKeyValues)
        report.add(
          `${where}.apikey`,
          `key '${key.name}' gets a new value (the import was asked not to keep key values); its clients need the new one`,
        );
      else if (!MANUAL_KEY_PATTERN.test(key.apikey)) {
        report.add(
          `${where}.apikey`,
          `key '${key.name}': its value is not one Tessera accepts (8 to 200 of A-Z a-z 0-9 _ . ~ + / = -); it gets a new value, which its clients need`,
        );
      } else imported.keepValue = key.apikey;
    }
    keys.push(imported);
  });
  return keys;
}

export function mapUsers(
  project: LacProject,
  roles: Record<string, RoleDefinition>,
  report: ImportReport,
): ImportedUser[] {
  const users: ImportedUser[] = [];
  const dropped = new Set<string>();
  project.Users.forEach((user, index) => {
    const where = exportPath("Users", index);
    if (!isNameOf("user", user.name)) {
      report.add(
        where,
        `user '${user.name}' is not a Tessera user name (1 to 128 of A-Z a-z 0-9 _ . @ + -); left out`,
      );
      return;
    }
    if (user.status && user.status.toUpperCase() !== "A") {
      report.add(`${where}.status`, `user '${user.name}' is not active (status ${user.status}); left out`);
      return;
    }
    for (const field of ["fullname", "email", "comments"] as const) if (user[field]) dropped.add(field);
    const names = (user.roles ?? "")
      .split(",")
      .map((r) => r.trim())
      .filter((r) => r !== "");
    const imported: ImportedUser = {
      source: where,
      username: user.name,
      roles: rolesNamed(names, roles, `${where}.roles`, report),
      globals: globalsOf(user.data, `${where}.data`, report),
    };
    if (user.apikey_lifespan != null && user.apikey_lifespan > 0)
      imported.keyLifetimeSeconds = Math.min(user.apikey_lifespan, 366 * 24 * 3600);
    if (user.password_hash && user.password_salt)
      imported.lacPassword = { hash: user.password_hash, salt: user.password_salt };
    else
      report.add(
        where,
        `user '${user.name}' has no password hash in the export: imported without a usable password, an administrator must set one (PUT …/users/${user.name})`,
      );
    users.push(imported);
  });
  if (dropped.size > 0)
    report.add(
      exportPath("Users"),
      `users' ${[...dropped].join(", ")} have no counterpart in Tessera; left out`,
    );
  return users;
}
