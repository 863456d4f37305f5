/**
 * Deleting a project or an account: one incarnation goes with everything that
 * belongs to it — its records (definition history, users, administrators, API
 * keys), its storage (recorded first, so the sweeper drops what writes in
 * flight create there), its compiled model and sandbox programs in every
 * process. Every record carries the incarnation it belongs to, so a write that
 * lands after the deletion stays with the dead incarnation: a project or
 * account created again under the same name never sees it.
 */
import { errors } from "../../../../../shared/errors.ts";
import { checkIfMatch, type Precondition } from "../../../../../shared/http/if-match.ts";
import type { KeyStore } from "../../../../../shared/keys/key-store.ts";
import type { AccountRateLimitStore } from "../../../../../shared/rate-limits/request-limits.ts";
import type { AdminStore } from "../../store/admin-store.ts";
import type { Leases } from "../../store/leases.ts";
import type { AccountDoc, MetaStore, ProjectWithStorage } from "../../store/meta-store.ts";
import type { ProjectCache } from "../../store/project-cache.ts";
import type { RevisionStore } from "../../store/revision-store.ts";
import type { TenantStorage } from "../../store/storage-names.ts";
import type { UserStore } from "../../store/user-store.ts";
import type { ProjectModel } from "../model/project-model.ts";
import { holdAccount, holdAccountAdmins, holdProject } from "./change-leases.ts";
import { accountTag, checkPrecondition, requireAccountIncarnation } from "./project-changes.ts";

export interface DeletionDeps {
  meta: MetaStore;
  admins: AdminStore;
  users: UserStore;
  revisions: RevisionStore;
  keyStore: KeyStore;
  projects: ProjectCache<ProjectModel>;
  /** Drops the collections of a project, or an account's database (store/tenant-store.ts). */
  tenants: {
    dropProjectStorage(storage: TenantStorage): Promise<void>;
    dropAccountStorage(database: string, collectionPrefixes: string[]): Promise<void>;
  };
  leases: Leases;
}

/** What a project's records beyond its own are removed by, in every process. */
async function forgetProject(deps: DeletionDeps, account: string, project: string, uid: string) {
  await deps.projects.deleted(account, project, uid);
  await deps.users.deleteProject(account, project);
  await deps.revisions.deleteProject(account, project);
  await deps.keyStore.deleteProject(account, project);
}

/**
 * A project's deletion as the admin API asks for it: under the project's lease, while the account
 * is still incarnation `accountUid` (else 404) and the project meets the precondition (412).
 */
export async function applyProjectDeletion(
  deps: DeletionDeps,
  request: { account: string; accountUid: string; project: string; precondition: Precondition | undefined },
): Promise<void> {
  const { account, project } = request;
  await holdProject(deps, account, project, async () => {
    await requireAccountIncarnation(deps.meta, account, request.accountUid);
    const stored = await deps.meta.getProjectWithStorage(account, project);
    if (!stored) throw errors.notFound(`No project '${project}' in account '${account}'`);
    checkPrecondition(request.precondition, stored);
    await deleteProject(deps, stored);
  });
}

/**
 * An account's deletion as the admin API asks for it: under the account's lease, while it is still
 * incarnation `accountUid` (else 404) and meets the precondition (412); `deleting` learns how
 * many projects go with it just before they do. Its request rate limits, plan and usage
 * measurements go too (a re-created account starts on the default plan).
 */
export async function applyAccountDeletion(
  deps: DeletionDeps & {
    accountRateLimits: Pick<AccountRateLimitStore, "drop">;
    usage?: { forget(account: string, database: string): Promise<void> };
  },
  request: {
    account: string;
    accountUid: string;
    precondition: Precondition | undefined;
    deleting?: (projects: number) => void;
  },
): Promise<void> {
  const { account } = request;
  await holdAccount(deps, account, async () => {
    const doc = await deps.meta.getAccount(account);
    if (!doc || deps.meta.accountUid(doc) !== request.accountUid) throw errors.noAccount(account);
    checkIfMatch(request.precondition, accountTag(deps.meta, doc), `Account '${account}'`);
    const projects = await deps.meta.listProjects(account);
    request.deleting?.(projects.length);
    await deleteAccount(deps, doc, projects);
    await deps.accountRateLimits.drop(account);
    await deps.usage?.forget(account, deps.meta.accountDatabase(doc));
  });
}

/** Deletes a project's incarnation; the caller holds the project's lease (holdProject). */
export async function deleteProject(deps: DeletionDeps, stored: ProjectWithStorage): Promise<void> {
  const { account, name, uid, storage } = stored;
  await deps.meta.recordDeletedStorage({ account, project: name, ...storage, uid });
  await deps.meta.deleteProject(account, name, uid);
  await forgetProject(deps, account, name, uid);
  await deps.tenants.dropProjectStorage(storage);
}

/**
 * Deletes an account's incarnation: the account record first (nothing checked
 * against it afterwards passes), its administrators under the lease their
 * changes take, then its projects (`projects`: as listed before) with theirs.
 */
export async function deleteAccount(
  deps: DeletionDeps,
  doc: AccountDoc,
  projects: Pick<ProjectWithStorage, "name" | "uid" | "storage">[],
): Promise<void> {
  const account = doc._id;
  const database = deps.meta.accountDatabase(doc);
  const prefixes = projects.map((p) => p.storage.collectionPrefix);
  await deps.meta.recordDeletedStorage({
    account,
    database,
    uid: deps.meta.accountUid(doc),
    projects: projects.map(({ name, uid, storage }) => ({
      name,
      uid,
      collectionPrefix: storage.collectionPrefix,
    })),
  });
  await deps.meta.deleteAccount(account);
  await holdAccountAdmins(deps, deps.meta.accountUid(doc), () => deps.admins.deleteAccount(account));
  // Under each project's lease: a change of its users under way finishes first, or finds it gone.
  for (const p of projects)
    await holdProject(deps, account, p.name, () => forgetProject(deps, account, p.name, p.uid));
  await deps.users.deleteAccount(account);
  await deps.revisions.deleteAccount(account);
  await deps.tenants.dropAccountStorage(database, prefixes);
}
