/** What the admin API's routes of the data service are built from, and the look-ups they share. */
import type { Context } from "koa";
import { type AuditSink, noteAudit } from "../../../../../shared/admin-access/audit.ts";
import { errors } from "../../../../../shared/errors.ts";
import type { PasswordHasher } from "../../credentials/passwords.ts";
import type { DefinitionChecks, ProjectChangeDeps } from "../../domain/project-changes.ts";
import type { ProjectModel } from "../../domain/project-model.ts";
import type { AdminStore } from "../../store/admin-store.ts";
import type { AuditStore } from "../../store/audit-store.ts";
import type { Leases } from "../../store/leases.ts";
import type { AccountDoc, MetaStore, StoredProject } from "../../store/meta-store.ts";
import type { ProjectCache } from "../../store/project-cache.ts";
import type { RevisionStore } from "../../store/revision-store.ts";
import type { TableIndexStore } from "../../store/table-index-store.ts";
import type { TenantStore } from "../../store/tenant-store.ts";

export interface AdminRouteDeps extends DefinitionChecks, ProjectChangeDeps {
  meta: MetaStore;
  admins: AdminStore;
  revisions: RevisionStore;
  audit: AuditStore;
  auditTrail: AuditSink;
  leases: Leases;
  tenants: TenantStore;
  indexes: TableIndexStore;
  projects: ProjectCache<ProjectModel>;
  hasher: PasswordHasher;
  maxBodyBytes: number;
  publicBaseUrl: string | undefined;
}

/**
 * The account, else 404. Given the request, it also notes the account's
 * incarnation for the request's audit entry, so that the audit trail does not
 * read the account again.
 */
export async function requireAccount(
  deps: Pick<AdminRouteDeps, "meta">,
  account: string,
  ctx?: Context,
): Promise<AccountDoc> {
  const doc = await deps.meta.getAccount(account);
  if (!doc) throw errors.noAccount(account);
  if (ctx) noteAudit(ctx, { accountUid: deps.meta.accountUid(doc) });
  return doc;
}

/** The project, after its account (an absent account answers as such, whatever is asked of it). */
export async function requireProject(
  deps: Pick<AdminRouteDeps, "meta">,
  account: string,
  project: string,
  ctx: Context,
): Promise<StoredProject> {
  await requireAccount(deps, account, ctx);
  const stored = await deps.meta.getProject(account, project);
  if (!stored) throw errors.notFound(`No project '${project}' in account '${account}'`);
  return stored;
}

/** Times on the admin API: ISO 8601 in UTC. */
export function isoTime(date: Date | undefined): string | null {
  return date ? new Date(date).toISOString() : null;
}
