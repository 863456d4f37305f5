/** What the admin API's routes of the data service are built from, and the look-ups they share. */
import type { Context } from "koa";
import { type AuditSink, noteAudit } from "../../../../../shared/admin-access/audit.ts";
import { callerOf } from "../../../../../shared/admin-access/gate.ts";
import { errors } from "../../../../../shared/errors.ts";
import type { KeyStore } from "../../../../../shared/keys/key-store.ts";
import type { PlanStore } from "../../../../../shared/quotas/plan-store.ts";
import type { AccountRateLimitStore } from "../../../../../shared/rate-limits/request-limits.ts";
import type { PasswordHasher } from "../../credentials/passwords.ts";
import type { DefinitionChecks, ProjectChangeDeps } from "../../domain/admin/project-changes.ts";
import type { ProjectModel } from "../../domain/model/project-model.ts";
import type { AdminStore } from "../../store/admin-store.ts";
import type { AuditStore } from "../../store/audit-store.ts";
import type { Leases } from "../../store/leases.ts";
import type { AccountDoc, MetaStore, StoredProject } from "../../store/meta-store.ts";
import type { ProjectCache } from "../../store/project-cache.ts";
import type { RevisionStore } from "../../store/revision-store.ts";
import type { SecretBox } from "../../store/secret-box.ts";
import type { TableIndexStore } from "../../store/table-index-store.ts";
import type { WriteLoop } from "../../store/tenant-rows.ts";
import type { TenantStore } from "../../store/tenant-store.ts";
import type { UserStore } from "../../store/user-store.ts";
import type { WebhookStore } from "../../store/webhook-store.ts";
import type { RequestKind } from "../../usage/usage-meter.ts";
import type { UsageSeries, UsageSnapshot } from "../../usage/usage-series.ts";

/** Plans and usage (usage-routes.ts). */
export interface UsageAdminDeps {
  plans: PlanStore;
  series: UsageSeries;
  /** Measures an account's storage now. */
  measure(account: string): Promise<UsageSnapshot | undefined>;
  /** Makes an account's row counts again from the store; the counts by collection. */
  recount(account: string): Promise<Map<string, number>>;
  /** Forgets a deleted account's plan, measurement and row counts (its series expire). */
  forget(account: string, database: string): Promise<void>;
}

/** What the webhook routes need; absent when the change feed is off. */
export interface WebhookAdminDeps {
  store: WebhookStore;
  /** SANDBOX_ALLOW_LOOPBACK_FETCH: a loopback URL is refused without it. */
  allowLoopback: boolean;
  /** Seals the signing secrets before they are stored (SECRETS_KEY). */
  secrets: SecretBox;
  /** WEBHOOK_MAX_SUBSCRIPTIONS_PER_PROJECT. */
  maxPerProject: number;
}

export interface AdminRouteDeps extends DefinitionChecks, ProjectChangeDeps {
  meta: MetaStore;
  admins: AdminStore;
  users: UserStore;
  /** API key records: a deleted project's keys are removed with it. */
  keyStore: KeyStore;
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
  /** Each account's own request rate limits (the operator's). */
  accountRateLimits: AccountRateLimitStore;
  /** Webhook subscriptions (absent when the change feed is off). */
  webhooks?: WebhookAdminDeps;
  /** The write path, for the rows an import from Live API Creator loads (rules off). */
  writeLoop: WriteLoop;
  /** LAC_IMPORT_KEEP_KEY_VALUES: an import may keep the export's key values. */
  keepImportedKeyValues: boolean;
  /** Plans and usage (absent: the routes are not served). */
  usage?: UsageAdminDeps;
  /** Counts each request of an account (none: metering is off). */
  meterRequest?: (account: string, project: string | undefined, kind: RequestKind, status: number) => void;
}

/**
 * The account, else 404. Given the request, it also notes the account's
 * incarnation for the request's audit entry, so that the audit trail does not
 * read the account again; and an administrator of an earlier incarnation (a
 * request that passed the admin gate before the account was deleted and
 * created again) finds no account.
 */
export async function requireAccount(
  deps: Pick<AdminRouteDeps, "meta">,
  account: string,
  ctx?: Context,
): Promise<AccountDoc> {
  const doc = await deps.meta.getAccount(account);
  if (!doc) throw errors.noAccount(account);
  if (ctx) {
    const uid = deps.meta.accountUid(doc);
    const caller = callerOf(ctx);
    if (caller.kind === "admin" && caller.accountUid !== uid) throw errors.noAccount(account);
    noteAudit(ctx, { accountUid: uid });
  }
  return doc;
}

/** The account's current incarnation id (requireAccount's checks included). */
export async function requireAccountUid(
  deps: Pick<AdminRouteDeps, "meta">,
  account: string,
  ctx: Context,
): Promise<string> {
  return deps.meta.accountUid(await requireAccount(deps, account, ctx));
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
