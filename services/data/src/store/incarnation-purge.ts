/**
 * Removes what writes in flight at a deletion left behind for the deleted
 * incarnation: built-in users, definition revisions and API keys of a deleted
 * project; of a deleted account, besides those of its projects (and of projects
 * created for it while it was being deleted), its administrators and project
 * records. Such records are invisible already (each carries the incarnation it
 * belongs to); this keeps them from piling up. Run by the storage sweeper for
 * as long as it keeps the deletion's record, and only while no live account or
 * project uses the deleted storage (a restore from a backup brings the
 * incarnation back).
 */
import type { KeyStore } from "../../../../shared/keys/key-store.ts";
import type { AdminStore } from "./admin-store.ts";
import type { DeletedStorageDoc, MetaStore } from "./meta-store.ts";
import type { RevisionStore } from "./revision-store.ts";
import type { UserStore } from "./user-store.ts";

export interface IncarnationStores {
  meta: MetaStore;
  users: UserStore;
  admins: AdminStore;
  revisions: RevisionStore;
  keyStore: KeyStore;
}

export async function purgeIncarnation(stores: IncarnationStores, entry: DeletedStorageDoc): Promise<void> {
  // Recorded by a release that did not record incarnations: nothing to go by.
  if (entry.uid === undefined) return;
  if (entry.project !== undefined) {
    await purgeProjects(stores, entry.account, [{ name: entry.project, uid: entry.uid }]);
    return;
  }
  const late = await stores.meta.projectsOfAccountIncarnation(entry.uid);
  await purgeProjects(stores, entry.account, [...(entry.projects ?? []), ...late]);
  await stores.admins.deleteIncarnation(entry.uid);
  await stores.meta.deleteProjectsOfAccountIncarnation(entry.uid);
}

async function purgeProjects(
  stores: IncarnationStores,
  account: string,
  projects: { name: string; uid: string }[],
): Promise<void> {
  if (projects.length === 0) return;
  const uids = projects.map((p) => p.uid);
  await stores.users.deleteIncarnations(uids);
  await stores.revisions.deleteIncarnations(uids);
  for (const { name, uid } of projects) {
    for (const key of await stores.keyStore.list(account, name, Date.now())) {
      if (key.projectUid === uid) await stores.keyStore.deleteById(account, name, key.id, uid);
    }
  }
}
