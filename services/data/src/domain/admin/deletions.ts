/**
 * Deleting a project or an account: one incarnation goes with everything that
 * belongs to it — its records (definition history, users, administrators, API
 * keys), its storage (recorded first, so the sweeper drops what writes in
 * flight create there), its compiled model and sandbox programs in every
 * process. Every record carries the incarnation it belongs to, so a write that
 * lands after the deletion stays with the dead incarnation: a project or
 * account created again under the same name never sees it.
 */
import type { KeyStore } from "../../../../../shared/keys/key-store.ts";
import type { AdminStore } from "../../store/admin-store.ts";
import type { Leases } from "../../store/leases.ts";
import type { AccountDoc, MetaStore, ProjectWithStorage, StoredProject } from "../../store/meta-store.ts";
import type { ProjectCache } from "../../store/project-cache.ts";
import type { RevisionStore } from "../../store/revision-store.ts";
import type { TenantStorage } from "../../store/storage-names.ts";
import type { UserStore } from "../../store/user-store.ts";
import type { ProjectModel } from "../model/project-model.ts";
import { holdProject } from "./project-changes.ts";

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
    dropAccountStorage(database: string): Promise<void>;
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
  projects: Pick<StoredProject, "name" | "uid">[],
): Promise<void> {
  const account = doc._id;
  const database = deps.meta.accountDatabase(doc);
  await deps.meta.recordDeletedStorage({
    account,
    database,
    uid: deps.meta.accountUid(doc),
    projects: projects.map(({ name, uid }) => ({ name, uid })),
  });
  await deps.meta.deleteAccount(account);
  await deps.leases.hold(`admins:${deps.meta.accountUid(doc)}`, () => deps.admins.deleteAccount(account));
  // Under each project's lease: a change of its users under way finishes first, or finds it gone.
  for (const p of projects)
    await holdProject(deps, account, p.name, () => forgetProject(deps, account, p.name, p.uid));
  await deps.users.deleteAccount(account);
  await deps.revisions.deleteAccount(account);
  await deps.tenants.dropAccountStorage(database);
}
