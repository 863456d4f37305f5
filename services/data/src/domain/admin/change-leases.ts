/**
 * The lease policy of metadata changes (store/leases.ts): which Redis lease each kind of change
 * holds, so that changes of one record never interleave and a deletion waits for the changes
 * under way. An account's record (creation, display name, deletion) takes `account:<name>`; its
 * administrators take `admins:<incarnation>`; a project (its definition, its users, its
 * deletion) takes `project:<account>/<name>`; a project's creation also takes `projects:<account>`
 * (inside its project's lease), so that the account's count of projects is read and passed one
 * creation at a time. An account's deletion takes its administrators'
 * and each project's lease in turn (deletions.ts).
 */
import type { Leases } from "../../store/leases.ts";

type LeaseDeps = { leases: Leases };

export function holdAccount<T>(deps: LeaseDeps, account: string, work: () => Promise<T>): Promise<T> {
  return deps.leases.hold(`account:${account}`, work);
}

export function holdAccountAdmins<T>(
  deps: LeaseDeps,
  accountUid: string,
  work: () => Promise<T>,
): Promise<T> {
  return deps.leases.hold(`admins:${accountUid}`, work);
}

/**
 * Runs `work` holding the lease every change of the project takes (its
 * definition, its deletion, its users): while it runs, no other change of the
 * project's incarnation starts or ends.
 */
export function holdProject<T>(
  deps: LeaseDeps,
  account: string,
  project: string,
  work: () => Promise<T>,
): Promise<T> {
  return deps.leases.hold(`project:${account}/${project}`, work);
}

/** Runs the creation of a project of `account` holding the lease of the account's project count. */
export function holdProjectCreation<T>(deps: LeaseDeps, account: string, work: () => Promise<T>): Promise<T> {
  return deps.leases.hold(`projects:${account}`, work);
}
