/**
 * Applies what an import of a Live API Creator project produced (domain/lac-import)
 * as a new project, the way every change is made: the definition as one revision
 * through applyProjectChange (the check and the history every PUT has), then the
 * built-in users (user store), then the API keys (shared/keys/manual-keys.ts,
 * as the key routes make them). Nothing half-imported: what can refuse is checked
 * first (the project must not exist, kept key values must be free, the account's plan
 * must hold it all: import-quota.ts, checked by the route), and if users or keys still
 * fail (the plan's user and key limits are applied again where they are made), the new
 * project is deleted again with everything it got. So is it when loading its rows passes
 * a limit of the plan (403/4032: rows or bytes written meanwhile by others).
 *
 * Rows of the old database, when given, are loaded afterwards in batches through
 * the write path (writer.ts: types, keys, required values, parents must exist, row
 * locks and write intents) with the rules **off**: the rows carry the values LAC's
 * rules derived when they were written, and running the rules again would
 * rewrite history (a parent copy would copy today's price into old order lines,
 * a formula like `new Date()` would restamp every row) and refuse rows a
 * validation added later would not have let in. A batch that fails is written
 * again row by row, and each row refused is reported with the write's message.
 */
import type { AuditActor } from "../../../../../shared/admin-access/audit.ts";
import { ApiError, ErrorCode, errors } from "../../../../../shared/errors.ts";
import { hashKey } from "../../../../../shared/key-format.ts";
import type { KeyStore } from "../../../../../shared/keys/key-store.ts";
import { createManualKey } from "../../../../../shared/keys/manual-keys.ts";
import { lacPasswordRecord, NO_PASSWORD } from "../../credentials/lac-passwords.ts";
import type { TenantRows, WriteLoop } from "../../store/tenant-rows.ts";
import type { UserStore } from "../../store/user-store.ts";
import { holdProject } from "../admin/change-leases.ts";
import { applyProjectDeletion, type DeletionDeps } from "../admin/deletions.ts";
import { applyProjectChange, type ProjectChangeDeps, projectTag } from "../admin/project-changes.ts";
import type { TableRows } from "../lac-import/data-rows.ts";
import type { Unmapped } from "../lac-import/import-report.ts";
import type { LacImport } from "../lac-import/lac-import.ts";
import type { Principal } from "../read/authorization.ts";
import { executeWrite } from "../write/writer.ts";

export interface LacMigrationDeps extends ProjectChangeDeps, DeletionDeps {
  users: UserStore;
  keyStore: KeyStore;
  tenants: DeletionDeps["tenants"] & TenantRows;
  writeLoop: WriteLoop;
  now: () => number;
}

export interface LacMigration {
  account: string;
  accountUid: string;
  project: string;
  imported: LacImport;
  rows?: TableRows;
  by: AuditActor;
  requestId: string;
  /** Who loads the rows: the caller as an administrator (full access), never a project role. */
  loader: Principal;
  /** `<origin>/rest`, for the hrefs the write path makes. */
  restBase: string;
}

export interface MigrationResult {
  revision: number;
  summary: string;
  users: { username: string; password: "imported" | "none" }[];
  /** Each key's value is shown here once, as a key's creation shows it. */
  keys: { name: string; id: string; apikey: string; kept: boolean }[];
  data?: { loaded: Record<string, number>; refused: Unmapped[] };
}

/** Rows per write request when loading data. */
export const LOAD_BATCH = 200;

/** Refuses, before anything is written, what would stop the import half-way: kept key values in use. */
export async function checkKeyValuesFree(keys: KeyStore, imported: LacImport): Promise<void> {
  for (const key of imported.keys) {
    if (key.keepValue && (await keys.get(hashKey(key.keepValue)))) {
      throw errors.conflict(
        `The value of key '${key.name}' (${key.source}) is in use by another key; import with "keepKeyValues": false, or delete that key first`,
      );
    }
  }
}

export async function applyLacMigration(deps: LacMigrationDeps, m: LacMigration): Promise<MigrationResult> {
  await checkKeyValuesFree(deps.keyStore, m.imported);
  const applied = await applyProjectChange(deps, {
    account: m.account,
    accountUid: m.accountUid,
    project: m.project,
    definition: m.imported.definition,
    mustCreate: true,
    by: m.by,
    requestId: m.requestId,
    describe: (summary) => `import from Live API Creator: ${summary}`,
  });
  const incarnation = { account: m.account, name: m.project, uid: applied.uid };
  let users: MigrationResult["users"];
  let keys: MigrationResult["keys"];
  try {
    users = await holdProject(deps, m.account, m.project, async () => {
      // Under the project's lease, as every change of its users (the import's own check came first).
      if (deps.quotas) {
        const present = (await deps.users.list(incarnation)).length;
        await deps.quotas.checkCount(m.account, "usersPerProject", present, m.imported.users.length);
      }
      const written: MigrationResult["users"] = [];
      for (const user of m.imported.users) {
        const record = user.lacPassword && lacPasswordRecord(user.lacPassword.hash, user.lacPassword.salt);
        await deps.users.put(incarnation, {
          username: user.username,
          passwordHash: record ?? NO_PASSWORD,
          roles: user.roles,
          globals: user.globals,
          keyLifetimeSeconds: user.keyLifetimeSeconds,
        });
        written.push({ username: user.username, password: record ? "imported" : "none" });
      }
      return written;
    });
    keys = [];
    const roles = Object.keys(m.imported.definition.roles);
    for (const key of m.imported.keys) {
      const created = await createManualKey(
        { keys: deps.keyStore, now: deps.now, ...(deps.quotas ? { keyLimit: deps.quotas.keyLimit } : {}) },
        m.account,
        m.project,
        { uid: applied.uid, roles },
        {
          name: key.name,
          roles: key.roles,
          globals: key.globals,
          ...(key.description ? { description: key.description } : {}),
          ...(key.userIdentifier ? { userIdentifier: key.userIdentifier } : {}),
          ...(key.expiration ? { expiration: key.expiration } : {}),
          ...(key.keepValue ? { apikey: key.keepValue } : {}),
        },
      );
      keys.push({
        name: key.name,
        id: created.id,
        apikey: created.apikey,
        kept: key.keepValue !== undefined,
      });
    }
  } catch (err) {
    await undoImport(deps, m, applied);
    throw err;
  }
  const result: MigrationResult = { revision: applied.revision, summary: applied.summary, users, keys };
  if (m.rows && m.rows.length > 0) {
    try {
      result.data = await loadRows(deps, m);
    } catch (err) {
      // A limit of the plan passed while loading (the rows or bytes checked before were passed
      // meanwhile): the import is refused whole, as before it began.
      await undoImport(deps, m, applied);
      throw err;
    }
  }
  return result;
}

/** Nothing half-imported: the project goes again, with the users, keys and rows it got. */
async function undoImport(
  deps: LacMigrationDeps,
  m: LacMigration,
  applied: { uid: string; revision: number },
) {
  await applyProjectDeletion(deps, {
    account: m.account,
    accountUid: m.accountUid,
    project: m.project,
    precondition: { tags: [projectTag(applied)] },
  }).catch(() => undefined);
}

async function loadRows(
  deps: LacMigrationDeps,
  m: LacMigration,
): Promise<NonNullable<MigrationResult["data"]>> {
  const model = await deps.projects.get(m.account, m.project);
  const version = model ? [...model.versions.values()][0] : undefined;
  const loaded: Record<string, number> = {};
  const refused: Unmapped[] = [];
  if (!model || !version) {
    refused.push({
      path: "data",
      reason: "the imported project has no API version to write through; no rows were loaded",
    });
    return { loaded, refused };
  }
  const addressing = { restBase: m.restBase, account: m.account, project: m.project, version: version.name };
  const write = (resourceName: string, body: Record<string, unknown>[]) => {
    const resource = version.resources.get(resourceName);
    if (!resource) throw errors.notFound(`No resource '${resourceName}'`);
    return executeWrite(deps.tenants, deps.writeLoop, {
      project: model,
      principal: m.loader,
      resource,
      addressing,
      method: "POST",
      body,
    });
  };
  for (const { table, rows } of m.rows ?? []) {
    loaded[table] = 0;
    for (let start = 0; start < rows.length; start += LOAD_BATCH) {
      const batch = rows.slice(start, start + LOAD_BATCH);
      try {
        await write(
          table,
          batch.map((r) => r.values),
        );
        loaded[table] += batch.length;
        continue;
      } catch (err) {
        if (isQuotaRefusal(err)) throw err;
        if (!isRefusal(err)) return stopped(loaded, refused, batch[0]?.source, err);
      }
      for (const row of batch) {
        try {
          await write(table, [row.values]);
          loaded[table] += 1;
        } catch (err) {
          if (isQuotaRefusal(err)) throw err;
          if (!isRefusal(err)) return stopped(loaded, refused, row.source, err);
          refused.push({ path: row.source, reason: err.message });
        }
      }
    }
  }
  return { loaded, refused };
}

/** A write refused for its row (4xx), as opposed to the store or sandbox being unavailable. */
function isRefusal(err: unknown): err is ApiError {
  return err instanceof ApiError && err.statusCode < 500;
}

/** A write refused by a limit of the account's plan (403/4032): the whole import is refused. */
function isQuotaRefusal(err: unknown): boolean {
  return err instanceof ApiError && err.errorCode === ErrorCode.quotaExceeded;
}

/** Loading stops at a failure that is not the row's (the store went away): what was loaded stays, the rest is reported. */
function stopped(
  loaded: Record<string, number>,
  refused: Unmapped[],
  at: string | undefined,
  err: unknown,
): NonNullable<MigrationResult["data"]> {
  const why = err instanceof Error ? err.message : String(err);
  refused.push({
    path: at ?? "data",
    reason: `loading stopped here (${why}); this row and the ones after it were not loaded`,
  });
  return { loaded, refused };
}
